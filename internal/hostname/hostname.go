// Package hostname owns the naming scheme of instance URLs: {id}.{domain}
// for the default port, {id}-{port}.{domain} for any other port, and public
// port hostnames ({slug} or {prefix}-{id}) under the same apps domain.
package hostname

import (
	"strconv"
)

// Namer builds URLs under one apps domain.
type Namer struct {
	Domain string // apps domain, e.g. "localhost"
	Scheme string // "http" or "https"
	Port   int    // the edge's port; left out of URLs when it is the scheme's default
}

// URL is the base URL of a hostname label under the apps domain.
func (n Namer) URL(label string) string {
	u := n.Scheme + "://" + label + "." + n.Domain
	if n.Port != 0 && !(n.Scheme == "http" && n.Port == 80) && !(n.Scheme == "https" && n.Port == 443) {
		u += ":" + strconv.Itoa(n.Port)
	}
	return u
}

// InstanceURL is the bare URL of an instance.
func (n Namer) InstanceURL(id string) string { return n.URL(id) }

// PortURL is the URL of one port of an instance.
func (n Namer) PortURL(id string, port int) string { return n.URL(id + "-" + strconv.Itoa(port)) }
