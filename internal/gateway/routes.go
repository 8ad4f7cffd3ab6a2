package gateway

import "net/http"

// routes is the whole route table of spec/gateway-api.md plus GET
// /v1/models and GET /v1/activity (docs/gateway.md).
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	h := func(pattern string, fn handlerFunc) { mux.Handle(pattern, s.handle(fn)) }

	h("POST /v1/responses", s.createResponse)
	h("GET /v1/responses/{id}/stream", s.streamResponse)
	h("POST /v1/responses/{id}/cancel", s.cancelResponse)

	h("GET /v1/sessions", s.listSessions)
	h("GET /v1/sessions/{id}", s.readSession)
	h("PATCH /v1/sessions/{id}", s.renameSession)
	h("DELETE /v1/sessions/{id}", s.deleteSession)

	s.fileRoutes(mux)

	h("GET /v1/health", s.health)
	h("GET /v1/version", s.version)
	h("GET /v1/models", s.models)
	h("GET /v1/activity", s.activity)

	h("/", func(w http.ResponseWriter, r *http.Request) error {
		return newError(http.StatusNotFound, "not_found", "no route %s %s", r.Method, r.URL.Path)
	})
	return mux
}

// fileRoutes are the files endpoints, shared by the gateway and the web
// file browser (FilesHandler).
func (s *Server) fileRoutes(mux *http.ServeMux) {
	h := func(pattern string, fn handlerFunc) { mux.Handle(pattern, s.handle(fn)) }
	h("GET /v1/files", s.listFiles)
	h("DELETE /v1/files", s.deleteFile)
	h("PATCH /v1/files", s.moveFile)
	h("GET /v1/files/content", s.readFile)
	h("PUT /v1/files/content", s.writeFile)
	h("GET /v1/files/archive", s.archive)
	h("POST /v1/files/dir", s.makeDir)
}

// FilesHandler serves only the files endpoints of the gateway, with the
// same rules and code, for the web file browser. It does not
// authenticate: serve it behind Authenticate.
func (s *Server) FilesHandler() http.Handler {
	mux := http.NewServeMux()
	s.fileRoutes(mux)
	mux.Handle("/v1/", s.handle(func(w http.ResponseWriter, r *http.Request) error {
		return newError(http.StatusNotFound, "not_found", "no route %s %s", r.Method, r.URL.Path)
	}))
	return mux
}
