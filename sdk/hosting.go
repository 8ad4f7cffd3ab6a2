package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
)

// Templates lists the system catalog, then workspace templates by name.
func (c *Client) Templates(ctx context.Context) ([]Template, error) {
	var out List[Template]
	err := c.do(ctx, http.MethodGet, "/v1/templates", nil, &out)
	return out.Data, err
}

// Template reads one template; name may carry @<tag> or @<revision>.
func (c *Client) Template(ctx context.Context, name string) (Template, error) {
	var out Template
	err := c.do(ctx, http.MethodGet, "/v1/templates/"+esc(name), nil, &out)
	return out, err
}

// CreateTemplate registers a workspace template, copying its image in.
func (c *Client) CreateTemplate(ctx context.Context, req CreateTemplate) (Template, error) {
	var out Template
	err := c.do(ctx, http.MethodPost, "/v1/templates", req, &out)
	return out, err
}

// UpdateTemplate patches a workspace template.
func (c *Client) UpdateTemplate(ctx context.Context, name string, req UpdateTemplate) (Template, error) {
	var out Template
	err := c.do(ctx, http.MethodPatch, "/v1/templates/"+esc(name), req, &out)
	return out, err
}

// DeleteTemplate removes a workspace template.
func (c *Client) DeleteTemplate(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/v1/templates/"+esc(name), nil, nil)
}

// CreateInstance creates an instance and returns it once running.
func (c *Client) CreateInstance(ctx context.Context, req CreateInstance) (Instance, error) {
	var out Instance
	err := c.do(ctx, http.MethodPost, "/v1/instances", req, &out)
	return out, err
}

// Instances lists the workspace's instances, newest first.
func (c *Client) Instances(ctx context.Context) ([]Instance, error) {
	var out List[Instance]
	err := c.do(ctx, http.MethodGet, "/v1/instances", nil, &out)
	return out.Data, err
}

// Instance reads one instance.
func (c *Client) Instance(ctx context.Context, id string) (Instance, error) {
	var out Instance
	err := c.do(ctx, http.MethodGet, "/v1/instances/"+esc(id), nil, &out)
	return out, err
}

// UpdateInstance patches an instance. Fields are sent as given: a key
// with a nil value clears it (name, user, metadata).
func (c *Client) UpdateInstance(ctx context.Context, id string, fields map[string]any) (Instance, error) {
	var out Instance
	err := c.do(ctx, http.MethodPatch, "/v1/instances/"+esc(id), fields, &out)
	return out, err
}

// DeleteInstance deletes an instance.
func (c *Client) DeleteInstance(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/v1/instances/"+esc(id), nil, nil)
}

func (c *Client) ack(ctx context.Context, id, op string) (Ack, error) {
	var out Ack
	err := c.do(ctx, http.MethodPost, "/v1/instances/"+esc(id)+"/"+op, nil, &out)
	return out, err
}

// StopInstance stops an instance.
func (c *Client) StopInstance(ctx context.Context, id string) (Ack, error) {
	return c.ack(ctx, id, "stop")
}

// StartInstance starts an instance.
func (c *Client) StartInstance(ctx context.Context, id string) (Ack, error) {
	return c.ack(ctx, id, "start")
}

// RestartInstance restarts an instance.
func (c *Client) RestartInstance(ctx context.Context, id string) (Ack, error) {
	return c.ack(ctx, id, "restart")
}

// Exec runs a command in an instance.
func (c *Client) Exec(ctx context.Context, id string, req ExecRequest) (ExecResult, error) {
	var out ExecResult
	err := c.do(ctx, http.MethodPost, "/v1/instances/"+esc(id)+"/exec", req, &out)
	return out, err
}

// Logs returns the console log; with follow it streams until ctx ends.
func (c *Client) Logs(ctx context.Context, id string, tail int, follow bool) (io.ReadCloser, error) {
	q := url.Values{}
	if tail > 0 {
		q.Set("tail", strconv.Itoa(tail))
	}
	if follow {
		q.Set("follow", "true")
	}
	resp, err := c.send(ctx, http.MethodGet, "/v1/instances/"+esc(id)+"/logs?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// Metrics samples an instance's counters.
func (c *Client) Metrics(ctx context.Context, id string) (Metrics, error) {
	var out Metrics
	err := c.do(ctx, http.MethodGet, "/v1/instances/"+esc(id)+"/metrics", nil, &out)
	return out, err
}

// AddPublicPort makes a port public.
func (c *Client) AddPublicPort(ctx context.Context, id string, req PortRequest) (PublicPort, error) {
	var out PublicPort
	err := c.do(ctx, http.MethodPost, "/v1/instances/"+esc(id)+"/public-ports", req, &out)
	return out, err
}

// PublicPorts lists an instance's public ports.
func (c *Client) PublicPorts(ctx context.Context, id string) ([]PublicPort, error) {
	var out List[PublicPort]
	err := c.do(ctx, http.MethodGet, "/v1/instances/"+esc(id)+"/public-ports", nil, &out)
	return out.Data, err
}

// DeletePublicPort revokes a public port.
func (c *Client) DeletePublicPort(ctx context.Context, id string, port int) error {
	return c.do(ctx, http.MethodDelete, "/v1/instances/"+esc(id)+"/public-ports/"+strconv.Itoa(port), nil, nil)
}

// Raw sends any request to the hosting API and returns the raw answer,
// whatever its status (for tests and tools that check error envelopes).
func (c *Client) Raw(ctx context.Context, method, path string, body json.RawMessage) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Key != "" {
		req.Header.Set("Authorization", "Bearer "+c.Key)
	}
	return c.HTTP.Do(req)
}
