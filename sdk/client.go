// Package sdk is the public Go client of svc: the hosting API at /v1 and
// the gateway every instance serves at its own URL. The svc CLI and the
// end-to-end tests use nothing else.
package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client talks to one svc server with one API key.
type Client struct {
	BaseURL string
	Key     string
	HTTP    *http.Client
}

// New returns a client for baseURL (e.g. http://localhost:7070).
func New(baseURL, key string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Key: key, HTTP: &http.Client{Transport: Transport()}}
}

// Transport is an HTTP transport that resolves localhost and *.localhost
// to loopback itself, as RFC 6761 asks: Go's resolver would ask DNS for
// {id}.localhost and fail.
func Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err == nil && IsLocalhost(host) {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
		return dialer.DialContext(ctx, network, addr)
	}
	t.MaxIdleConnsPerHost = 64
	return t
}

// IsLocalhost reports whether host is localhost or under .localhost.
func IsLocalhost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// Error is an error answer of the hosting API ({ error: { code, message,
// detail? } }) or a transport error of the edge ({ error: "code" }).
type Error struct {
	Status  int
	Code    string
	Message string
	Detail  string
	// Param, Hint and ResponseID come with gateway errors.
	Param      string
	Hint       string
	ResponseID string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%d %s", e.Status, e.Code)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// ErrorCode returns the code of an *Error, or "".
func ErrorCode(err error) string {
	if e, ok := err.(*Error); ok {
		return e.Code
	}
	return ""
}

// parseError reads an error answer in either envelope.
func parseError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	e := &Error{Status: resp.StatusCode}
	var raw struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"` // flat transport errors
	}
	if json.Unmarshal(b, &raw) == nil && len(raw.Error) > 0 {
		var flat string
		var full struct {
			Code       string `json:"code"`
			Message    string `json:"message"`
			Detail     string `json:"detail"`
			Param      string `json:"param"`
			Hint       string `json:"hint"`
			ResponseID string `json:"response_id"`
		}
		if json.Unmarshal(raw.Error, &flat) == nil {
			e.Code, e.Message = flat, raw.Message
		} else if json.Unmarshal(raw.Error, &full) == nil {
			e.Code, e.Message, e.Detail = full.Code, full.Message, full.Detail
			e.Param, e.Hint, e.ResponseID = full.Param, full.Hint, full.ResponseID
		}
	}
	if e.Code == "" {
		e.Code = http.StatusText(resp.StatusCode)
		e.Message = strings.TrimSpace(string(b))
	}
	return e
}

// do sends a JSON request and decodes a JSON answer into out (if not nil).
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	resp, err := c.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		io.Copy(io.Discard, resp.Body)
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// send returns the response of a request whose status is 2xx.
func (c *Client) send(ctx context.Context, method, path string, in any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+c.Key)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, parseError(resp)
	}
	return resp, nil
}

func esc(s string) string { return url.PathEscape(s) }
