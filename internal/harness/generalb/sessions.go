package generalb

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/svc-dev/svc/internal/agent/session"
	"github.com/svc-dev/svc/internal/harness"
	"github.com/svc-dev/svc/internal/harness/builtin"
)

// Window is how many of the most recently active sessions the list draws
// from.
const Window = 1000

// Sessions lists sessions started through the API, newest activity first:
// id, label as title, last activity; no counts or previews.
func (h *Harness) Sessions(ctx context.Context) ([]harness.SessionRow, error) {
	list, err := h.b.Store.List(ctx, Window)
	if err != nil {
		return nil, err
	}
	rows := make([]harness.SessionRow, 0, len(list))
	for _, s := range list {
		rows = append(rows, harness.SessionRow{ID: s.ID, Title: s.Title, LastActive: &s.LastActive})
	}
	return rows, nil
}

// History is the transcript of a live session; unknown and archived ids
// have an empty one.
func (h *Harness) History(ctx context.Context, id string) ([]harness.Message, error) {
	return h.b.Store.History(ctx, id)
}

// Rename sets the session's label, unique among live sessions.
func (h *Harness) Rename(ctx context.Context, id, title string) (bool, error) {
	title = strings.TrimSpace(title)
	if title == "" {
		return false, &harness.Error{Code: "validation_error", Message: "title must not be empty", Param: "title"}
	}
	ok, err := h.b.Store.Rename(ctx, id, title)
	if errors.Is(err, session.ErrTitleTaken) {
		return false, &harness.Error{Code: "title_conflict", Param: "title",
			Message: fmt.Sprintf("another session is already labelled %q", title)}
	}
	return ok, err
}

// Delete archives the session: it leaves the list and its history is no
// longer readable through the API, but its rows stay on disk.
func (h *Harness) Delete(ctx context.Context, id string) (bool, error) {
	return h.b.Store.Archive(ctx, id, builtin.Now())
}
