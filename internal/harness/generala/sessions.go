package generala

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/svc-dev/svc/internal/agent/session"
	"github.com/svc-dev/svc/internal/harness"
)

// ListLimit is how many sessions the list returns.
const ListLimit = 100

// MaxTitle is the longest title a rename accepts, in characters.
const MaxTitle = 100

// Sessions lists up to 100 sessions, most recently active first.
func (h *Harness) Sessions(ctx context.Context) ([]harness.SessionRow, error) {
	list, err := h.b.Store.List(ctx, ListLimit)
	if err != nil {
		return nil, err
	}
	rows := make([]harness.SessionRow, 0, len(list))
	for _, s := range list {
		rows = append(rows, harness.SessionRow{ID: s.ID, Title: s.Title, LastActive: &s.LastActive,
			MessageCount: &s.MessageCount, Preview: s.Preview})
	}
	return rows, nil
}

// History is the transcript; unknown ids have an empty one.
func (h *Harness) History(ctx context.Context, id string) ([]harness.Message, error) {
	return h.b.Store.History(ctx, id)
}

// Rename sets a title: trimmed, non-empty, at most MaxTitle characters,
// unique among sessions.
func (h *Harness) Rename(ctx context.Context, id, title string) (bool, error) {
	title = strings.TrimSpace(title)
	if title == "" {
		return false, &harness.Error{Code: "validation_error", Message: "title must not be empty", Param: "title"}
	}
	if n := utf8.RuneCountInString(title); n > MaxTitle {
		return false, &harness.Error{Code: "validation_error", Param: "title",
			Message: fmt.Sprintf("title is %d characters; at most %d are allowed", n, MaxTitle)}
	}
	ok, err := h.b.Store.Rename(ctx, id, title)
	if errors.Is(err, session.ErrTitleTaken) {
		return false, &harness.Error{Code: "title_conflict", Param: "title",
			Message: fmt.Sprintf("another session is already titled %q", title)}
	}
	return ok, err
}

// Delete removes the session and its transcript from the database.
func (h *Harness) Delete(ctx context.Context, id string) (bool, error) {
	return h.b.Store.Delete(ctx, id)
}
