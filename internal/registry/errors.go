package registry

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/svc-dev/svc/internal/fault"
)

// sourceError turns a failed import into what the caller reports: the
// context's error when the request went away, a fault.InvalidRequest when the
// source cannot be pulled, a plain (internal) error when our own storage
// failed. Messages are built from status codes, never from what the source
// sent back, and the cause kept for the log has the credential scrubbed: a
// hostile registry could echo the Authorization header in its error body.
func sourceError(ctx context.Context, err error, src string, auth *Auth) error {
	if ctx.Err() != nil {
		return fmt.Errorf("registry: import %s: %w", src, ctx.Err())
	}
	if _, ok := fault.As(err); ok {
		return err
	}
	cause := scrub(err, auth)
	var terr *transport.Error
	if errors.As(err, &terr) {
		if isLocal(terr.Request) {
			if terr.StatusCode >= 400 && terr.StatusCode < 500 && terr.StatusCode != http.StatusUnauthorized {
				return fault.Wrap(cause, fault.InvalidRequest, "image was rejected by the registry: %s", diagnostics(terr))
			}
			return fmt.Errorf("registry: store image: %w", cause)
		}
		switch terr.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return fault.Wrap(cause, fault.InvalidRequest, "image_ref %q cannot be pulled: access denied (missing, private without a valid registry_auth, or wrong registry_auth)", src)
		case http.StatusNotFound:
			return fault.Wrap(cause, fault.InvalidRequest, "image_ref %q cannot be pulled: not found", src)
		case http.StatusTooManyRequests:
			return fault.Wrap(cause, fault.InvalidRequest, "image_ref %q cannot be pulled: the registry is rate limiting", src)
		default:
			return fault.Wrap(cause, fault.InvalidRequest, "image_ref %q cannot be pulled: the registry answered HTTP %d", src, terr.StatusCode)
		}
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		if u, perr := url.Parse(uerr.URL); perr == nil && u.Host == localHost {
			// The upload failed while reading its body, which is a blob
			// streaming from the source.
			return fault.Wrap(cause, fault.InvalidRequest, "image_ref %q cannot be pulled: the registry stopped sending or sent corrupt data", src)
		}
	}
	var nerr net.Error
	if errors.As(err, &nerr) || errors.As(err, &uerr) {
		return fault.Wrap(cause, fault.InvalidRequest, "image_ref %q cannot be pulled: its registry cannot be reached", src)
	}
	return fault.Wrap(cause, fault.InvalidRequest, "image_ref %q cannot be pulled", src)
}

func isLocal(req *http.Request) bool {
	return req != nil && req.URL != nil && req.URL.Host == localHost
}

func isTransportError(err error) bool {
	var terr *transport.Error
	var uerr *url.Error
	return errors.As(err, &terr) || errors.As(err, &uerr)
}

// diagnostics lists the registry error codes of a response.
func diagnostics(terr *transport.Error) string {
	if len(terr.Errors) == 0 {
		return fmt.Sprintf("HTTP %d", terr.StatusCode)
	}
	codes := make([]string, len(terr.Errors))
	for i, d := range terr.Errors {
		codes[i] = string(d.Code)
	}
	return strings.Join(codes, ", ")
}

// scrub returns err with every form of the credential replaced, for logs.
func scrub(err error, auth *Auth) error {
	if auth == nil || (auth.Password == "" && auth.Username == "") {
		return err
	}
	msg := err.Error()
	pair := auth.Username + ":" + auth.Password
	for _, s := range []string{
		base64.StdEncoding.EncodeToString([]byte(pair)),
		base64.URLEncoding.EncodeToString([]byte(pair)),
		base64.RawStdEncoding.EncodeToString([]byte(pair)),
		url.QueryEscape(auth.Password),
		auth.Password,
	} {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}
