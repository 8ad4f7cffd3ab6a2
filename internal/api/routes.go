package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/instance"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/internal/template"
	"github.com/svc-dev/svc/sdk"
)

// API is the hosting API.
type API struct {
	st        *store.Store
	templates *template.Service
	instances *instance.Service
	signed    SignedURLs
	log       *slog.Logger
}

// SignedURLs mints signed URLs (the edge checks them).
type SignedURLs interface {
	Mint(ctx context.Context, ws, id string, req sdk.SignedURLRequest) (sdk.SignedURL, error)
}

// New returns the hosting API.
func New(st *store.Store, templates *template.Service, instances *instance.Service, signed SignedURLs, log *slog.Logger) *API {
	return &API{st: st, templates: templates, instances: instances, signed: signed, log: log}
}

// Handler is the whole route table. Every /v1 route sits behind the key
// check, the catch-all included.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	h := func(pattern string, fn HandlerFunc) { mux.Handle(pattern, a.handle(fn)) }

	h("GET /v1/templates", a.listTemplates)
	h("POST /v1/templates", a.createTemplate)
	h("GET /v1/templates/{name}", a.getTemplate)
	h("PATCH /v1/templates/{name}", a.updateTemplate)
	h("DELETE /v1/templates/{name}", a.deleteTemplate)

	h("POST /v1/instances", a.createInstance)
	h("GET /v1/instances", a.listInstances)
	h("GET /v1/instances/{id}", a.getInstance)
	h("PATCH /v1/instances/{id}", a.updateInstance)
	h("DELETE /v1/instances/{id}", a.deleteInstance)
	h("POST /v1/instances/{id}/stop", a.ack(a.instances.Stop))
	h("POST /v1/instances/{id}/start", a.ack(a.instances.Start))
	h("POST /v1/instances/{id}/restart", a.ack(a.instances.Restart))
	h("POST /v1/instances/{id}/exec", a.execInstance)
	h("GET /v1/instances/{id}/logs", a.instanceLogs)
	h("GET /v1/instances/{id}/metrics", a.instanceMetrics)

	h("POST /v1/instances/{id}/public-ports", a.addPublicPort)
	h("GET /v1/instances/{id}/public-ports", a.listPublicPorts)
	h("DELETE /v1/instances/{id}/public-ports/{port}", a.deletePublicPort)
	h("POST /v1/instances/{id}/signed-urls", a.mintSignedURL)

	h("/v1/", func(w http.ResponseWriter, r *http.Request) error {
		return fault.NotFoundf("no route for %s %s", r.Method, r.URL.Path)
	})

	root := http.NewServeMux()
	root.Handle("/v1/", a.authenticate(mux))
	return logRequests(a.log, root)
}
