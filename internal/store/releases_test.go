package store

import (
	"context"
	"errors"
	"testing"
)

// Releases lists a system template's releases newest first; a tag is
// published once.
func TestReleases(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	for i, tag := range []string{"2026-11-20", "2026-11-21", "2026-11-21.2"} {
		r := Release{Name: "svc-general", Tag: tag, ImageRef: "svc/svc-general:" + tag, ImageDigest: "sha256:" + tag, Repo: "system/svc-general", Created: int64(100 + i)}
		if err := s.PublishRelease(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PublishRelease(ctx, Release{Name: "svc-general", Tag: "2026-11-21", ImageRef: "x", ImageDigest: "y", Repo: "z"}); !errors.Is(err, ErrConflict) {
		t.Errorf("republishing a tag: %v, want ErrConflict", err)
	}
	got, err := s.Releases(ctx, "svc-general")
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, r := range got {
		tags = append(tags, r.Tag)
	}
	if len(tags) != 3 || tags[0] != "2026-11-21.2" || tags[2] != "2026-11-20" {
		t.Errorf("releases %v, want newest first", tags)
	}
	if none, err := s.Releases(ctx, "svc-workflow"); err != nil || len(none) != 0 {
		t.Errorf("a template without releases: %v %v", none, err)
	}
}
