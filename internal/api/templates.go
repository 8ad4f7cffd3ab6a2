package api

import (
	"net/http"

	"github.com/svc-dev/svc/sdk"
)

func (a *API) listTemplates(w http.ResponseWriter, r *http.Request) error {
	list, err := a.templates.List(r.Context(), Workspace(r.Context()).ID)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, sdk.List[sdk.Template]{Data: list})
}

func (a *API) createTemplate(w http.ResponseWriter, r *http.Request) error {
	var req sdk.CreateTemplate
	if err := decode(r, &req, false); err != nil {
		return err
	}
	ws := Workspace(r.Context()).ID
	t, err := a.templates.Create(r.Context(), ws, req)
	if err != nil {
		return err
	}
	view, err := a.templates.View(r.Context(), t)
	if err != nil {
		return err
	}
	return encode(w, http.StatusCreated, view)
}

func (a *API) getTemplate(w http.ResponseWriter, r *http.Request) error {
	t, err := a.templates.Get(r.Context(), Workspace(r.Context()).ID, r.PathValue("name"))
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, t)
}

func (a *API) updateTemplate(w http.ResponseWriter, r *http.Request) error {
	var req sdk.UpdateTemplate
	if err := decode(r, &req, true); err != nil {
		return err
	}
	t, err := a.templates.Update(r.Context(), Workspace(r.Context()).ID, r.PathValue("name"), req)
	if err != nil {
		return err
	}
	view, err := a.templates.View(r.Context(), t)
	if err != nil {
		return err
	}
	return encode(w, http.StatusOK, view)
}

func (a *API) deleteTemplate(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if err := a.templates.Delete(r.Context(), Workspace(r.Context()).ID, name); err != nil {
		return err
	}
	return encode(w, http.StatusOK, sdk.Deleted{Name: name, Deleted: true})
}
