package instance

import (
	"net"
	"regexp"
	"strings"
)

var (
	ipv4RE = regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}\b`)
	// IPv6 candidates are checked with net.ParseIP so clock times such as
	// 12:34:56 are left alone.
	ipv6RE = regexp.MustCompile(`[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}`)
)

// redact removes host paths and IP addresses from text shown to clients:
// console output can carry them, and they describe our hosts, not the
// user's instance.
func (s *Service) redact(text string) string {
	for _, p := range append([]string{"/var/lib/docker"}, s.cfg.HostPaths...) {
		if p == "" || p == "/" {
			continue
		}
		re := regexp.MustCompile(regexp.QuoteMeta(p) + `[^\s"'<>]*`)
		text = re.ReplaceAllString(text, "[host-path]")
	}
	text = ipv4RE.ReplaceAllStringFunc(text, func(m string) string {
		if net.ParseIP(m) != nil {
			return "[ip]"
		}
		return m
	})
	return ipv6RE.ReplaceAllStringFunc(text, func(m string) string {
		if strings.Count(m, ":") >= 2 && net.ParseIP(m) != nil && m != "::" {
			return "[ip]"
		}
		return m
	})
}

// tail returns the last n characters of s.
func tail(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[len(r)-n:])
}
