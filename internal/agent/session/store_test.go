package session

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-dev/svc/internal/agent"
)

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func exchange(user, answer string, at int64) []Entry {
	return []Entry{
		{Role: "user", Content: user, CreatedAt: at},
		{Role: "assistant", Content: answer, Thinking: "thought about " + user, CreatedAt: at + 5,
			Replay: []agent.Message{
				{Role: "assistant", ToolCalls: []agent.ToolCall{{ID: "c1", Type: "function", Function: agent.FunctionCall{Name: "shell", Arguments: `{"command":"ls"}`}}}},
				{Role: "tool", ToolCallID: "c1", Content: "a.txt"},
				{Role: "assistant", Content: answer},
			}},
	}
}

func TestTranscriptSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "general-a", "sessions.db")
	s := open(t, path)
	if err := s.Append(ctx, "s1", "m", "", exchange("  list   the\nfiles please ", "one file", 1000)); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(ctx, "s1", "m", "", exchange("and now?", "still one", 2000)); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = open(t, path)
	defer s.Close()
	sess, err := s.Get(ctx, "s1")
	if err != nil || sess == nil {
		t.Fatalf("%v %v", sess, err)
	}
	if sess.MessageCount != 4 || sess.LastActive != 2005 || *sess.Preview != "list the files please" || sess.Title != nil {
		t.Fatalf("session %+v", sess)
	}
	hist, err := s.History(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 4 || hist[0].Role != "user" || hist[1].Content != "one file" || hist[1].Thinking != "thought about   list   the\nfiles please " || hist[3].CreatedAt != 2005 {
		t.Fatalf("history %+v", hist)
	}
	if !strings.HasPrefix(hist[0].ID, "msg_") || hist[0].ID == hist[1].ID || hist[0].SessionID != "s1" {
		t.Fatalf("ids %q %q", hist[0].ID, hist[1].ID)
	}
	replay, err := s.Replay(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	roles := []string{}
	for _, m := range replay {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]string{"user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"}, roles); diff != "" {
		t.Fatalf("replay roles (-want +got):\n%s", diff)
	}
	if replay[1].ToolCalls[0].Function.Name != "shell" || replay[2].ToolCallID != "c1" {
		t.Fatalf("replay %+v", replay)
	}
	if h, _ := s.History(ctx, "unknown"); h == nil || len(h) != 0 {
		t.Fatalf("unknown history %v", h)
	}
}

func TestTitles(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer s.Close()
	for _, id := range []string{"a", "b", "c"} {
		if err := s.Append(ctx, id, "", "", exchange("hi", "hello", 1)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ id, want string }{{"a", "Greeting"}, {"b", "Greeting (2)"}, {"c", "Greeting (3)"}} {
		got, err := s.SetGeneratedTitle(ctx, c.id, "Greeting")
		if err != nil || got != c.want {
			t.Fatalf("%s: %q %v", c.id, got, err)
		}
	}
	// A generated title never replaces one that is set.
	if got, _ := s.SetGeneratedTitle(ctx, "a", "Other"); got != "" {
		t.Fatalf("overwrote a title with %q", got)
	}
	if _, err := s.Rename(ctx, "b", "Greeting"); !errors.Is(err, ErrTitleTaken) {
		t.Fatalf("rename to a taken title: %v", err)
	}
	if ok, err := s.Rename(ctx, "a", "Greeting"); !ok || err != nil {
		t.Fatalf("rename to its own title: %v %v", ok, err)
	}
	if ok, err := s.Rename(ctx, "zzz", "New"); ok || err != nil {
		t.Fatalf("rename unknown: %v %v", ok, err)
	}
	// Deleting frees the title.
	if ok, _ := s.Delete(ctx, "a"); !ok {
		t.Fatal("delete")
	}
	if ok, err := s.Rename(ctx, "b", "Greeting"); !ok || err != nil {
		t.Fatalf("rename after delete: %v %v", ok, err)
	}
	if ok, _ := s.Delete(ctx, "a"); ok {
		t.Fatal("second delete reported true")
	}
}

func TestArchiveKeepsRowsAndFreesTheID(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer s.Close()
	if _, err := s.Ensure(ctx, "x", "svc/m1", "high", 10); err != nil {
		t.Fatal(err)
	}
	s.Append(ctx, "x", "", "", exchange("secret plan", "ok", 20))
	s.Rename(ctx, "x", "Plan")
	if ok, _ := s.Archive(ctx, "x", 30); !ok {
		t.Fatal("archive")
	}
	if sess, _ := s.Get(ctx, "x"); sess != nil {
		t.Fatalf("archived session still live: %+v", sess)
	}
	if h, _ := s.History(ctx, "x"); len(h) != 0 {
		t.Fatalf("archived history readable: %v", h)
	}
	if l, _ := s.List(ctx, 10); len(l) != 0 {
		t.Fatalf("archived session listed: %v", l)
	}
	var kept int
	s.db.QueryRow(`SELECT COUNT(*) FROM messages`).Scan(&kept)
	if kept != 2 {
		t.Fatalf("%d archived messages kept on disk, want 2", kept)
	}
	// The id and the title start fresh.
	sess, err := s.Ensure(ctx, "x", "svc/m2", "", 40)
	if err != nil || sess.Model != "svc/m2" || sess.MessageCount != 0 || sess.Title != nil {
		t.Fatalf("%+v %v", sess, err)
	}
	if ok, err := s.Rename(ctx, "x", "Plan"); !ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
	if ok, _ := s.Archive(ctx, "x", 50); !ok {
		t.Fatal("second archive of the same id")
	}
}

func TestListOrderAndLimit(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer s.Close()
	for i, id := range []string{"old", "mid", "new"} {
		s.Append(ctx, id, "", "", exchange("q", "a", int64(100*(i+1))))
	}
	s.Append(ctx, "old", "", "", exchange("again", "a", 1000))
	l, err := s.List(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 2 || l[0].ID != "old" || l[1].ID != "new" {
		t.Fatalf("list %+v", l)
	}
}

// Two sessions active in the same millisecond: the one written to last is
// listed first, whichever was created first.
func TestListOrderOnATie(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer s.Close()
	s.Append(ctx, "first", "", "", exchange("q", "a", 100))
	s.Append(ctx, "second", "", "", exchange("q", "a", 100))
	s.Append(ctx, "first", "", "", exchange("again", "a", 100))
	l, err := s.List(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 2 || l[0].ID != "first" || l[1].ID != "second" {
		t.Fatalf("list %+v, want first (written last) before second", l)
	}
}

func TestGeneratedTitleTakesTheLowestFreeNumber(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "s.db"))
	defer s.Close()
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		s.Append(ctx, id, "", "", exchange("q", "a", 1))
	}
	// LIKE wildcards in a title must not match other titles.
	s.Rename(ctx, "a", "50% off")
	s.Rename(ctx, "b", "50% off (3)")
	s.Rename(ctx, "c", "50X off (2)")
	for _, c := range []struct{ id, want string }{{"d", "50% off (2)"}, {"e", "50% off (4)"}} {
		if got, err := s.SetGeneratedTitle(ctx, c.id, "50% off"); err != nil || got != c.want {
			t.Fatalf("%s: %q %v", c.id, got, err)
		}
	}
}
