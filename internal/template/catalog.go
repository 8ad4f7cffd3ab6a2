// Package template owns templates: the built-in system catalog with its
// dated image releases, workspace templates with their revisions, version
// pins, and resolving a create's template string to one pinned image.
package template

import "github.com/svc-dev/svc/internal/harness"

// GatewayPort is where every gateway template serves its chat API.
const GatewayPort = 3737

// PlatformPort is a public port the platform opens on every instance of a
// system template.
type PlatformPort struct {
	Port  int
	Label string
}

// System is one entry of the built-in catalog.
type System struct {
	Name        string
	Description string
	DefaultPort int
	// Agent is the harness the gateway runs by default ("" for no gateway).
	Agent       string
	PublicPorts []PlatformPort
}

// Gateway reports whether the template's image runs svc-gateway.
func (s System) Gateway() bool { return s.Agent != "" }

// MessengerPort is the public webhook port of the general templates.
const MessengerPort = 8443

// Catalog is the system catalog in the order GET /v1/templates lists it.
var Catalog = []System{
	{Name: "svc-general", Description: "General agent: chat, browsing, code, files. The default template.",
		DefaultPort: GatewayPort, Agent: harness.GeneralA, PublicPorts: []PlatformPort{{MessengerPort, "messenger"}}},
	{Name: "svc-general-small", Description: "Same agent on a lean image: chat, code, files, shell; no browser or desktop. Faster pull and boot.",
		DefaultPort: GatewayPort, Agent: harness.GeneralA, PublicPorts: []PlatformPort{{MessengerPort, "messenger"}}},
	{Name: "svc-general-alt", Description: "A second general agent: chat, headless browsing, code, files.",
		DefaultPort: GatewayPort, Agent: harness.GeneralB},
	{Name: "svc-coding-a", Description: "Coding agent on your own vendor-A account; connect it before the first chat turn. No browser or desktop.",
		DefaultPort: GatewayPort, Agent: harness.CodingA},
	{Name: "svc-coding-b", Description: "Coding agent on your own vendor-B account; connect it before the first chat turn.",
		DefaultPort: GatewayPort, Agent: harness.CodingB},
	{Name: "svc-coding-c", Description: "Coding agent on your own vendor-C API key; set it before the first chat turn.",
		DefaultPort: GatewayPort, Agent: harness.CodingC},
	{Name: "svc-coding-d", Description: "Open-source coding agent on the managed model out of the box; no account needed.",
		DefaultPort: GatewayPort, Agent: harness.CodingD},
	{Name: "svc-workflow", Description: "Workflow automation web app with visual editor, webhooks, app integrations and the managed model for its AI nodes. No chat API.",
		DefaultPort: 5678, PublicPorts: []PlatformPort{{5678, "editor"}}},
}

// DefaultTemplate is what an empty create runs.
const DefaultTemplate = "svc-general"

// SystemByName finds a catalog entry.
func SystemByName(name string) (System, bool) {
	for _, s := range Catalog {
		if s.Name == name {
			return s, true
		}
	}
	return System{}, false
}

// SystemRepo is the private-storage repository of a system template.
func SystemRepo(name string) string { return "system/" + name }

// ReservedPorts are platform ports: never a default_port nor public.
var ReservedPorts = map[int]bool{7681: true, 8080: true, 6080: true, 7890: true, 9119: true, 22022: true}

// Reserved reports whether port is a platform port. The gateway port 3737
// is reserved for public ports but may be a template's default port.
func Reserved(port int) bool { return ReservedPorts[port] }
