package dashboard

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Tool is one browser tool of the instance the dashboard links to.
type Tool struct {
	Name string `json:"name"`
	Port int    `json:"port"`
	// Path is where the tool's page is on its port: "/" when empty.
	Path string `json:"path"`
	// URL is the tool's per-port URL, {id}-{port}.{apps domain}; empty
	// when the instance URL is unknown (the page then links to the same
	// host at the port, which is right when run on a laptop).
	URL string `json:"url"`
	// Up is whether something listens on the port inside the instance.
	Up bool `json:"up"`
}

// portURL derives a port's URL from the instance URL svcd sets,
// http(s)://{id}.{domain}[:port]: the first label gains "-{port}"; path
// (with its query) follows.
func portURL(instanceURL string, port int, path string) string {
	u, err := url.Parse(instanceURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	id, domain, ok := strings.Cut(u.Hostname(), ".")
	if !ok || id == "" || domain == "" {
		return ""
	}
	host := id + "-" + strconv.Itoa(port) + "." + domain
	if p := u.Port(); p != "" {
		host = net.JoinHostPort(host, p)
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return u.Scheme + "://" + host + path
}

// probe tells, for each tool, whether its port accepts a connection on
// loopback, all in parallel and bounded by timeout.
func probe(ctx context.Context, tools []Tool, timeout time.Duration) {
	var wg sync.WaitGroup
	for i := range tools {
		wg.Go(func() {
			d := net.Dialer{Timeout: timeout}
			c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(tools[i].Port)))
			if err == nil {
				c.Close()
				tools[i].Up = true
			}
		})
	}
	wg.Wait()
}
