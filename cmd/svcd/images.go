package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/moby/moby/client"
	"github.com/spf13/cobra"

	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/internal/sysimage"
)

// imagesCmd builds and lists the system template images (docs/images.md).
func imagesCmd(dataDir *string, stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "images", Short: "Build, publish and list the system template images"}

	b := &sysimage.Builder{Progress: stdout}
	var missing, keepGoing bool
	build := &cobra.Command{
		Use:   "build [NAME...]",
		Short: "Build the system images (all, or the names given) and publish each that changed as a dated release",
		RunE: func(cmd *cobra.Command, names []string) error {
			ctx := cmd.Context()
			data, err := sysimage.OpenData(ctx, *dataDir)
			if err != nil {
				return err
			}
			defer data.Close()
			if missing {
				if names, err = unpublished(cmd, data.Store, names); err != nil || len(names) == 0 {
					return err
				}
			}
			if b.Docker, err = client.New(client.FromEnv); err != nil {
				return err
			}
			defer b.Docker.Close()
			if b.Gateway == "" {
				b.Gateway = besideExecutable("svc-gateway")
			}
			p := &sysimage.Publisher{Docker: b.Docker, Store: data.Store, Registry: data.Registry,
				Logf: func(f string, a ...any) { fmt.Fprintf(stdout, f+"\n", a...) }}
			start := time.Now()
			pubs, err := release(ctx, b, p, names, keepGoing, stdout)
			printReleases(stdout, pubs)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "done in %s\n", time.Since(start).Round(time.Second))
			return nil
		},
	}
	f := build.Flags()
	f.BoolVar(&missing, "missing", false, "only the templates with no release yet in this data directory")
	f.BoolVar(&keepGoing, "keep-going", false, "go on with the other images when one fails (make run)")
	f.StringVar(&b.Gateway, "gateway", "", "static svc-gateway binary to bake in (default: svc-gateway beside svcd)")
	f.StringVar(&b.CacheDir, "cache", sysimage.DefaultCacheDir(), "cache of the Debian root and build locks (env SVC_IMAGE_CACHE)")
	f.StringVar(&b.Mirror, "debian-mirror", "", "Debian mirror for debootstrap when the base cannot be pulled")
	f.BoolVarP(&b.Verbose, "verbose", "v", false, "show every line of build output")

	list := &cobra.Command{
		Use: "list", Short: "List the releases of every system template in this data directory", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := store.Open(cmd.Context(), filepath.Join(*dataDir, "svc.db"))
			if err != nil {
				return err
			}
			defer st.Close()
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TEMPLATE\tTAG\tIMAGE_REF\tDIGEST\tPUBLISHED")
			for _, n := range sysimage.Names() {
				rels, err := st.Releases(cmd.Context(), n)
				if err != nil {
					return err
				}
				if len(rels) == 0 {
					fmt.Fprintf(tw, "%s\t-\t(not built: make images)\t\t\n", n)
				}
				for _, r := range rels {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Name, r.Tag, r.ImageRef, r.ImageDigest,
						time.Unix(r.Created, 0).UTC().Format(time.DateTime))
				}
			}
			return tw.Flush()
		},
	}
	cmd.AddCommand(build, list)
	return cmd
}

// release builds and publishes names (all when empty), stopping at the
// first failure unless keepGoing, in which case the failures are reported
// together at the end.
func release(ctx context.Context, b *sysimage.Builder, p *sysimage.Publisher, names []string, keepGoing bool, out io.Writer) ([]sysimage.Published, error) {
	if !keepGoing {
		return sysimage.Release(ctx, b, p, names...)
	}
	if len(names) == 0 {
		names = sysimage.Names()
	}
	var pubs []sysimage.Published
	var failed []error
	for _, n := range names {
		got, err := sysimage.Release(ctx, b, p, n)
		pubs = append(pubs, got...)
		if err != nil {
			if ctx.Err() != nil {
				return pubs, err
			}
			fmt.Fprintf(out, "%s: FAILED: %v\n", n, err)
			failed = append(failed, fmt.Errorf("%s: %w", n, err))
		}
	}
	return pubs, errors.Join(failed...)
}

// unpublished keeps the names (every template when none) that have no
// release yet, and says which are skipped.
func unpublished(cmd *cobra.Command, st *store.Store, names []string) ([]string, error) {
	if len(names) == 0 {
		names = sysimage.Names()
	}
	var out []string
	for _, n := range names {
		_, err := st.LatestRelease(cmd.Context(), n)
		if errors.Is(err, store.ErrNotFound) {
			out = append(out, n)
		} else if err != nil {
			return nil, err
		}
	}
	if len(out) == 0 {
		fmt.Fprintln(cmd.OutOrStdout(), "images: every system template has a release (make images rebuilds them)")
	} else {
		fmt.Fprintf(cmd.OutOrStdout(), "images: building %d missing: %v\n", len(out), out)
	}
	return out, nil
}

func printReleases(w io.Writer, pubs []sysimage.Published) {
	if len(pubs) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nTEMPLATE\tRELEASE\tDIGEST\t")
	for _, p := range pubs {
		what := "unchanged"
		if p.New {
			what = "new"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Release.Name, p.Release.Tag, p.Release.ImageDigest, what)
	}
	tw.Flush()
}

// besideExecutable is the path of name in the running binary's directory
// (make build puts svcd and svc-gateway in bin/ together).
func besideExecutable(name string) string {
	exe, err := os.Executable()
	if err != nil {
		return name
	}
	return filepath.Join(filepath.Dir(exe), name)
}
