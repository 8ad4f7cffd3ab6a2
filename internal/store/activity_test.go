package store

import (
	"context"
	"testing"
)

func TestActivityKeepsTheLatest(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	s.CreateWorkspace(ctx, "ws1", "one")
	for _, id := range []string{"aaaaaaaaaa", "bbbbbbbbbb"} {
		in := Instance{ID: id, WorkspaceID: "ws1", Status: "running", Template: "t", TemplateName: "t", TemplateScope: "workspace",
			CPU: 2, Memory: 4, Disk: 4, Type: "default", IdleTimeout: 900}
		if err := s.CreateInstance(ctx, in, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordActivity(ctx, map[string]int64{"aaaaaaaaaa": 2000, "bbbbbbbbbb": 5000}); err != nil {
		t.Fatal(err)
	}
	// An older value (another process flushing late) does not move it back.
	if err := s.RecordActivity(ctx, map[string]int64{"aaaaaaaaaa": 1000, "bbbbbbbbbb": 6000}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Activity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["aaaaaaaaaa"] != 2000 || got["bbbbbbbbbb"] != 6000 {
		t.Fatalf("activity %v", got)
	}
	// A deleted instance's activity is forgotten.
	now := s.Now()
	s.MutateInstance(ctx, "aaaaaaaaaa", func(in *Instance) error { in.Deleted = &now; return nil })
	if got, _ := s.Activity(ctx); len(got) != 1 || got["bbbbbbbbbb"] != 6000 {
		t.Fatalf("after delete %v", got)
	}
}
