package sdk

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// InstanceClient talks to one instance URL ({id}.{apps_domain}) or one of
// its port URLs ({id}-{port}.{apps_domain}) through the edge, sending the
// workspace key as X-Svc-Key. It has no overall timeout: streams last as
// long as they last, and a request to a sleeping instance is held while
// it wakes (up to three minutes).
type InstanceClient struct {
	BaseURL string
	Key     string
	HTTP    *http.Client
}

// NewInstanceClient returns a client for an instance base URL.
func NewInstanceClient(baseURL, key string) *InstanceClient {
	return &InstanceClient{BaseURL: strings.TrimRight(baseURL, "/"), Key: key, HTTP: &http.Client{Transport: Transport()}}
}

// InstanceClient returns a client for an instance's URL with this client's
// key, sharing its connections.
func (c *Client) InstanceClient(in Instance) *InstanceClient {
	return &InstanceClient{BaseURL: strings.TrimRight(in.URL, "/"), Key: c.Key, HTTP: c.HTTP}
}

// Port returns a client for another port of the same instance
// ({id}-{port}.{apps_domain}).
func (c *InstanceClient) Port(port int) *InstanceClient {
	out := *c
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return &out
	}
	host := u.Hostname()
	label, rest, _ := strings.Cut(host, ".")
	label, _, _ = strings.Cut(label, "-") // an id never has a hyphen
	host = label + "-" + strconv.Itoa(port) + "." + rest
	if p := u.Port(); p != "" {
		host += ":" + p
	}
	u.Host = host
	out.BaseURL = strings.TrimRight(u.String(), "/")
	return &out
}

// NewRequest makes a request for path (absolute, e.g. /v1/health) with
// the key set.
func (c *InstanceClient) NewRequest(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return nil, err
	}
	if c.Key != "" {
		req.Header.Set("X-Svc-Key", c.Key)
	}
	return req, nil
}

// Do sends a request and returns the answer whatever its status.
func (c *InstanceClient) Do(req *http.Request) (*http.Response, error) {
	if c.Key != "" && req.Header.Get("X-Svc-Key") == "" {
		req.Header.Set("X-Svc-Key", c.Key)
	}
	return c.HTTP.Do(req)
}

// Get fetches path and returns the answer if it is 2xx, else the edge's
// or application's error as an *Error.
func (c *InstanceClient) Get(ctx context.Context, path string) (*http.Response, error) {
	req, err := c.NewRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	return c.Send(req)
}

// Send sends a request and returns the answer if it is 2xx, else the
// edge's or application's error as an *Error.
func (c *InstanceClient) Send(req *http.Request) (*http.Response, error) {
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, parseError(resp)
	}
	return resp, nil
}

// SignedURL mints a URL a browser can open without the key: it sets a
// cookie for that host and redirects. Port nil is the default route.
func (c *Client) SignedURL(ctx context.Context, id string, req SignedURLRequest) (SignedURL, error) {
	var out SignedURL
	err := c.do(ctx, http.MethodPost, "/v1/instances/"+esc(id)+"/signed-urls", req, &out)
	return out, err
}
