package sysimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/svc-dev/svc/internal/auth"
	"github.com/svc-dev/svc/internal/registry"
	"github.com/svc-dev/svc/internal/store"
)

// Release builds the named templates (all when none) and publishes each as
// soon as it is built, so an interrupted run keeps what it finished.
func Release(ctx context.Context, b *Builder, p *Publisher, names ...string) ([]Published, error) {
	if len(names) == 0 {
		names = Names()
	}
	var out []Published
	for _, n := range names {
		imgs, err := b.Build(ctx, n)
		if err != nil {
			return out, err
		}
		pub, err := p.Publish(ctx, imgs[0])
		if err != nil {
			return out, err
		}
		out = append(out, pub)
	}
	return out, nil
}

// Data is a data directory's store and registry, opened by a process other
// than svcd serve (svcd admin, the bench); svcd may be running on it.
type Data struct {
	Store    *store.Store
	Registry *registry.Registry
	tmp      string
}

// OpenData opens the store and the registry of dataDir. The registry spools
// archives in a temporary directory of its own, so svcd's start does not
// clear it under us.
func OpenData(ctx context.Context, dataDir string) (*Data, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, filepath.Join(dataDir, "svc.db"))
	if err != nil {
		return nil, err
	}
	// The same credential svcd uses (server.Start): the registry demands
	// one on every request, in-process ones too.
	pw, err := st.SetMetaOnce(ctx, "registry_password", auth.Random(32, "abcdefghijklmnopqrstuvwxyz0123456789"))
	if err != nil {
		st.Close()
		return nil, err
	}
	regDir := filepath.Join(dataDir, "registry")
	if err := os.MkdirAll(regDir, 0o700); err != nil {
		st.Close()
		return nil, err
	}
	tmp, err := os.MkdirTemp(regDir, "admin-tmp-")
	if err != nil {
		st.Close()
		return nil, err
	}
	reg, err := registry.New(ctx, registry.Config{Dir: regDir, Username: "svcd", Password: pw, TmpDir: tmp})
	if err != nil {
		os.RemoveAll(tmp)
		st.Close()
		return nil, fmt.Errorf("open registry: %w", err)
	}
	return &Data{Store: st, Registry: reg, tmp: tmp}, nil
}

// Close closes the registry and the store.
func (d *Data) Close() error {
	d.Registry.Close()
	os.RemoveAll(d.tmp)
	return d.Store.Close()
}
