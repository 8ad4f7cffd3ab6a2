package hostname

import (
	"strconv"
	"strings"
)

// Kind is what a hostname under the apps domain names.
type Kind int

const (
	// Unknown is a host under the apps domain that matches no form; the
	// edge answers it 404 not_found.
	Unknown Kind = iota
	// Instance is {id} (the default route) or {id}-{port}.
	Instance
	// Public is a public port: a 20-character slug or {prefix}-{id}.
	Public
)

// Lengths of the generated labels. The forms are told apart by length and
// by where the hyphens are, never by a lookup: an id is exactly IDLen
// alphanumerics, a slug exactly SlugLen, neither contains a hyphen; in
// {id}-{port} the hyphen is at index IDLen and a port has at most five
// digits, so such a label is 12 to 16 long, and read as {prefix}-{id} its
// last ten characters would include that hyphen, which no id has.
const (
	IDLen     = 10
	SlugLen   = 20
	PrefixMax = 30
)

// Route is a parsed edge hostname.
type Route struct {
	Kind  Kind
	Label string // the DNS label under the apps domain
	// ID is the instance of an Instance route, and the instance a
	// {prefix}-{id} public host claims (the store has the final word).
	ID string
	// Port is the port of {id}-{port}; 0 is the instance's default route.
	Port int
}

// Parse reads a Host header value (with or without a port) against the
// apps domain. ok is false when the host is not strictly under the domain:
// the API's own host, an IP address, another name. A host under the domain
// that is not one of the four forms is ok with Kind Unknown.
func (n Namer) Parse(host string) (r Route, ok bool) {
	host = strings.ToLower(stripPort(host))
	host = strings.TrimSuffix(host, ".")
	domain := strings.TrimSuffix(strings.ToLower(n.Domain), ".")
	label, found := strings.CutSuffix(host, "."+domain)
	if !found || domain == "" || label == "" {
		return Route{}, false
	}
	r.Label = label
	if strings.Contains(label, ".") {
		return r, true // a deeper name: Unknown
	}
	switch {
	case len(label) == IDLen && alnum(label):
		r.Kind, r.ID = Instance, label
	case len(label) == SlugLen && alnum(label):
		r.Kind = Public
	case len(label) > IDLen+1 && label[IDLen] == '-' && alnum(label[:IDLen]) && validPort(label[IDLen+1:]):
		r.Kind, r.ID = Instance, label[:IDLen]
		r.Port, _ = strconv.Atoi(label[IDLen+1:])
	case len(label) > IDLen+1 && label[len(label)-IDLen-1] == '-' && alnum(label[len(label)-IDLen:]) &&
		ValidPrefix(label[:len(label)-IDLen-1]):
		r.Kind, r.ID = Public, label[len(label)-IDLen:]
	}
	return r, true
}

// stripPort removes a :port suffix, leaving bracketed IPv6 literals whole.
func stripPort(host string) string {
	i := strings.LastIndexByte(host, ':')
	if i < 0 || i < strings.LastIndexByte(host, ']') {
		return host
	}
	return host[:i]
}

func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// validPort accepts the canonical decimal form of 1..65535 (no sign, no
// leading zero), so each port has exactly one hostname.
func validPort(s string) bool {
	if len(s) == 0 || len(s) > 5 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	p, _ := strconv.Atoi(s)
	return p <= 65535
}

// ValidPrefix reports whether s is a public port prefix: 1 to 30 lowercase
// letters, digits or hyphens, with no leading or trailing hyphen.
func ValidPrefix(s string) bool {
	if len(s) == 0 || len(s) > PrefixMax || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
