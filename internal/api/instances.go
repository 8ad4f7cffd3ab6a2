package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/instance"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/sdk"
)

// view renders an instance with its public ports.
func (a *API) view(r *http.Request, in store.Instance) (sdk.Instance, error) {
	ports, err := a.st.PublicPorts(r.Context(), in.ID)
	if err != nil {
		return sdk.Instance{}, err
	}
	return a.instances.View(in, ports), nil
}

func (a *API) createInstance(w http.ResponseWriter, r *http.Request) error {
	var req sdk.CreateInstance
	if err := decode(r, &req, true); err != nil {
		return err
	}
	in, err := a.instances.Create(r.Context(), Workspace(r.Context()), req)
	if err != nil {
		return err
	}
	v, err := a.view(r, in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, v)
}

func (a *API) listInstances(w http.ResponseWriter, r *http.Request) error {
	list, ports, err := a.instances.List(r.Context(), Workspace(r.Context()).ID)
	if err != nil {
		return err
	}
	out := sdk.List[sdk.Instance]{Data: make([]sdk.Instance, 0, len(list))}
	for _, in := range list {
		out.Data = append(out.Data, a.instances.View(in, ports[in.ID]))
	}
	return encode(w, http.StatusOK, out)
}

func (a *API) getInstance(w http.ResponseWriter, r *http.Request) error {
	in, err := a.instances.Get(r.Context(), Workspace(r.Context()).ID, r.PathValue("id"))
	if err != nil {
		return err
	}
	v, err := a.view(r, in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, v)
}

// decodePatch reads a PATCH body keeping explicit nulls apart from absent
// fields.
func decodePatch(r *http.Request) (instance.Patch, error) {
	var p instance.Patch
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return p, err
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return p, nil // Update refuses the empty patch
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return p, invalidJSON(err)
	}
	isNull := func(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }
	for k, v := range fields {
		var err error
		switch k {
		case "name":
			p.NameSet = true
			err = json.Unmarshal(v, &p.Name)
		case "user":
			p.UserSet = true
			err = json.Unmarshal(v, &p.User)
		case "metadata":
			p.MetadataSet, p.Metadata = true, v
		case "auto_sleep":
			if isNull(v) {
				return p, fault.Invalid("auto_sleep must be a boolean")
			}
			err = json.Unmarshal(v, &p.AutoSleep)
		case "idle_timeout_seconds":
			if isNull(v) {
				return p, fault.Invalid("idle_timeout_seconds must be an integer")
			}
			err = json.Unmarshal(v, &p.IdleTimeout)
		default:
			return p, fault.Invalid("unknown field %q (PATCH accepts name, user, metadata, auto_sleep, idle_timeout_seconds)", k)
		}
		if err != nil {
			return p, fault.Invalid("field %s has the wrong type", k)
		}
	}
	return p, nil
}

func (a *API) updateInstance(w http.ResponseWriter, r *http.Request) error {
	p, err := decodePatch(r)
	if err != nil {
		return err
	}
	in, err := a.instances.Update(r.Context(), Workspace(r.Context()).ID, r.PathValue("id"), p)
	if err != nil {
		return err
	}
	v, err := a.view(r, in)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, v)
}

func (a *API) deleteInstance(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := a.instances.Delete(r.Context(), Workspace(r.Context()).ID, id); err != nil {
		return err
	}
	return encode(w, http.StatusOK, sdk.Deleted{ID: id, Deleted: true})
}

// ack adapts stop, start and restart: no body (an empty object is fine),
// and the { id, status } acknowledgement.
func (a *API) ack(op func(ctx context.Context, ws, id string) (store.Instance, error)) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := decode(r, &struct{}{}, true); err != nil {
			return err
		}
		in, err := op(r.Context(), Workspace(r.Context()).ID, r.PathValue("id"))
		if err != nil {
			return err
		}
		return encode(w, http.StatusOK, sdk.Ack{ID: in.ID, Status: in.Status})
	}
}
