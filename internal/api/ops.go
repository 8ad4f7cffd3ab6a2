package api

import (
	"net/http"
	"strconv"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/sdk"
)

func (a *API) execInstance(w http.ResponseWriter, r *http.Request) error {
	var req sdk.ExecRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	res, err := a.instances.Exec(r.Context(), Workspace(r.Context()).ID, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, res)
}

// instanceLogs streams the console log as text: ?tail=N lines,
// ?follow=true keeps the answer open and flushes as lines arrive.
func (a *API) instanceLogs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	tail := 0
	if v := q.Get("tail"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fault.Invalid("tail must be a non-negative integer")
		}
		tail = n
	}
	follow := false
	if v := q.Get("follow"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fault.Invalid("follow must be true or false")
		}
		follow = b
	}
	rc, err := a.instances.Logs(r.Context(), Workspace(r.Context()).ID, r.PathValue("id"), tail, follow)
	if err != nil {
		return err
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rcw := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := rc.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return nil
			}
			if follow {
				rcw.Flush()
			}
		}
		if err != nil {
			return nil // EOF, or the client left
		}
	}
}

func (a *API) instanceMetrics(w http.ResponseWriter, r *http.Request) error {
	m, err := a.instances.Metrics(r.Context(), Workspace(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, m)
}

func (a *API) addPublicPort(w http.ResponseWriter, r *http.Request) error {
	var req sdk.PortRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	p, err := a.instances.AddPublicPort(r.Context(), Workspace(r.Context()).ID, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, a.instances.PortView(p))
}

func (a *API) listPublicPorts(w http.ResponseWriter, r *http.Request) error {
	ports, err := a.instances.PublicPorts(r.Context(), Workspace(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := sdk.List[sdk.PublicPort]{Data: []sdk.PublicPort{}}
	for _, p := range ports {
		out.Data = append(out.Data, a.instances.PortView(p))
	}
	return encode(w, http.StatusOK, out)
}

func (a *API) deletePublicPort(w http.ResponseWriter, r *http.Request) error {
	port, err := strconv.Atoi(r.PathValue("port"))
	if err != nil {
		return fault.NotFoundf("port %q is not public", r.PathValue("port"))
	}
	if err := a.instances.DeletePublicPort(r.Context(), Workspace(r.Context()).ID, r.PathValue("id"), port); err != nil {
		return err
	}
	return encode(w, http.StatusOK, sdk.Deleted{Port: port, Deleted: true})
}

// mintSignedURL answers POST /v1/instances/{id}/signed-urls.
func (a *API) mintSignedURL(w http.ResponseWriter, r *http.Request) error {
	var req sdk.SignedURLRequest
	if err := decode(r, &req, true); err != nil {
		return err
	}
	u, err := a.signed.Mint(r.Context(), Workspace(r.Context()).ID, r.PathValue("id"), req)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, u)
}
