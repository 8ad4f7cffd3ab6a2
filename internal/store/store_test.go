package store

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
)

// open returns a migrated store on a fresh SQLite file. The PostgreSQL
// dialect will run the same tests when it lands.
func open(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestReopenKeepsDataAndMigratesOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "svc.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateWorkspace(ctx, "ws1", "one"); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.SetMetaOnce(ctx, "bootstrap", "ws1"); v != "ws1" {
		t.Fatalf("meta %q", v)
	}
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, _ := s.SetMetaOnce(ctx, "bootstrap", "other"); v != "ws1" {
		t.Fatalf("SetMetaOnce overwrote: %q", v)
	}
	if _, err := s.Workspace(ctx, "ws1"); err != nil {
		t.Fatal(err)
	}
}

func TestKeysAndWallet(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	s.CreateWorkspace(ctx, "ws1", "one")
	if err := s.CreateAPIKey(ctx, "k1", "ws1", "hash1", "sk_live_abc"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAPIKey(ctx, "k2", "ws1", "hash1", "sk_live_abc"); !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate hash: %v", err)
	}
	w, err := s.WorkspaceByKeyHash(ctx, "hash1")
	if err != nil || w.ID != "ws1" {
		t.Fatalf("by key: %v %+v", err, w)
	}
	if _, err := s.WorkspaceByKeyHash(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown key: %v", err)
	}
	for i := 0; i < 2; i++ {
		applied, err := s.Credit(ctx, "ws1", 5_000_000, "topup-1", "first")
		if err != nil || applied != (i == 0) {
			t.Fatalf("credit %d: applied=%v err=%v", i, applied, err)
		}
	}
	wal, _ := s.Wallet(ctx, "ws1")
	if wal.BalanceMicros != 5_000_000 || wal.ToppedUpMicros != 5_000_000 {
		t.Fatalf("wallet %+v", wal)
	}
	if _, err := s.Credit(ctx, "nows", 1, "x", ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("credit unknown workspace: %v", err)
	}
	if wal, _ := s.Wallet(ctx, "ws1"); wal.BalanceMicros != 5_000_000 {
		t.Fatal("failed credit changed the balance")
	}
}

func TestTemplateRevisions(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	s.CreateWorkspace(ctx, "ws1", "one")
	ref := "example.com/a:1"
	if _, err := s.CreateTemplate(ctx, Template{WorkspaceID: "ws1", Name: "a", DefaultPort: 80}, Revision{ImageRef: &ref, ImageDigest: "sha256:1", Repo: "ws/ws1/a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateTemplate(ctx, Template{WorkspaceID: "ws1", Name: "a"}, Revision{ImageDigest: "sha256:x", Repo: "r"}); !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate name: %v", err)
	}
	desc := "second"
	tp, err := s.UpdateTemplate(ctx, "ws1", "a", TemplateChange{Description: &desc, Publish: &Revision{ImageDigest: "sha256:2", Repo: "ws/ws1/a"}})
	if err != nil || tp.Revision != 2 || tp.Description != "second" || tp.DefaultPort != 80 {
		t.Fatalf("update: %v %+v", err, tp)
	}
	revs, _ := s.Revisions(ctx, "ws1", "a")
	if len(revs) != 2 || revs[0].Revision != 2 || revs[1].ImageRef == nil || *revs[1].ImageRef != ref || revs[0].ImageRef != nil {
		t.Fatalf("revisions %+v", revs)
	}
	if _, err := s.TemplateRevision(ctx, "ws1", "a", 3); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unpublished revision: %v", err)
	}
	if err := s.DeleteTemplate(ctx, "ws1", "a"); err != nil {
		t.Fatal(err)
	}
	if revs, _ := s.Revisions(ctx, "ws1", "a"); len(revs) != 0 {
		t.Fatal("revisions survived delete")
	}
	if err := s.DeleteTemplate(ctx, "ws1", "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("repeat delete: %v", err)
	}
}

func TestInstancesAndPorts(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	s.CreateWorkspace(ctx, "ws1", "one")
	s.CreateWorkspace(ctx, "ws2", "two")
	mk := func(id, ws string, created int64) Instance {
		return Instance{ID: id, WorkspaceID: ws, Status: "starting", Template: "t", TemplateName: "t", TemplateScope: "workspace",
			CPU: 2, Memory: 4, Disk: 4, Type: "default", IdleTimeout: 900, Created: created, Env: map[string]string{"A": "b"},
			Metadata: []byte(`{"k":"v"}`)}
	}
	label := "messenger"
	if err := s.CreateInstance(ctx, mk("aaaaaaaaaa", "ws1", 100), []PublicPort{{Port: 8443, Hostname: "slug1", Label: &label}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateInstance(ctx, mk("bbbbbbbbbb", "ws1", 200), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateInstance(ctx, mk("cccccccccc", "ws2", 300), nil); err != nil {
		t.Fatal(err)
	}
	list, _ := s.Instances(ctx, "ws1")
	if len(list) != 2 || list[0].ID != "bbbbbbbbbb" || list[1].Env["A"] != "b" || string(list[1].Metadata) != `{"k":"v"}` {
		t.Fatalf("list %+v", list)
	}

	// Concurrent mutations serialize: each sees the previous one's write.
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.MutateInstance(ctx, "aaaaaaaaaa", func(in *Instance) error { in.IdleTimeout++; return nil }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if in, _ := s.Instance(ctx, "aaaaaaaaaa"); in.IdleTimeout != 920 {
		t.Fatalf("lost updates: %d", in.IdleTimeout)
	}
	sentinel := errors.New("refuse")
	if _, err := s.MutateInstance(ctx, "aaaaaaaaaa", func(in *Instance) error { in.Status = "x"; return sentinel }); err != sentinel {
		t.Fatalf("fn error: %v", err)
	}
	if in, _ := s.Instance(ctx, "aaaaaaaaaa"); in.Status != "starting" {
		t.Fatal("aborted mutation was written")
	}

	// Ports: cap, duplicate port, duplicate hostname.
	if _, err := s.AddPublicPort(ctx, PublicPort{InstanceID: "aaaaaaaaaa", Port: 8443, Hostname: "x"}, 20); !errors.Is(err, ErrPortExists) {
		t.Fatalf("dup port: %v", err)
	}
	if _, err := s.AddPublicPort(ctx, PublicPort{InstanceID: "aaaaaaaaaa", Port: 9000, Hostname: "slug1"}, 20); !errors.Is(err, ErrHostTaken) {
		t.Fatalf("dup host: %v", err)
	}
	if _, err := s.AddPublicPort(ctx, PublicPort{InstanceID: "aaaaaaaaaa", Port: 9000, Hostname: "slug2"}, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddPublicPort(ctx, PublicPort{InstanceID: "aaaaaaaaaa", Port: 9001, Hostname: "slug3"}, 2); !errors.Is(err, ErrLimit) {
		t.Fatalf("cap: %v", err)
	}
	if p, err := s.PublicPortByHost(ctx, "slug2"); err != nil || p.Port != 9000 {
		t.Fatalf("by host: %v %+v", err, p)
	}

	// Deleting an instance hides it and frees its hostnames.
	now := s.Now()
	if _, err := s.MutateInstance(ctx, "aaaaaaaaaa", func(in *Instance) error { in.Deleted = &now; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Instance(ctx, "aaaaaaaaaa"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted instance readable: %v", err)
	}
	if _, err := s.PublicPortByHost(ctx, "slug1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted instance's port routable: %v", err)
	}
	if all, _ := s.AllInstances(ctx); len(all) != 2 {
		t.Fatalf("all %d", len(all))
	}
}
