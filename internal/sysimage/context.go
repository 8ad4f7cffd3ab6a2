package sysimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/svc-dev/svc/images"
)

// contextTime is the mtime of every file in a build context, so a context
// is the same bytes whenever its files are.
var contextTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// GatewayFile is the name of the svc-gateway binary in a build context.
const GatewayFile = "svc-gateway"

// CommonDir is the directory of images/ every template's context also
// carries, as common/: the files all template images share.
const CommonDir = "common"

// HostCADir is where a build context carries the host's local CA
// certificates, for Dockerfiles that name it (see hostCAs).
const HostCADir = "host-ca"

// hostCAPattern finds the host's local CA certificates (Debian's place).
var hostCAPattern = "/usr/local/share/ca-certificates/*.crt"

// buildContext writes the tar the engine builds name from: the files of
// images/<name> (scripts, found by their #! line, executable), for a
// template images/common as common/, the host's CAs when the Dockerfile
// copies host-ca/, and, when gateway is not empty, that binary as
// svc-gateway.
func buildContext(w io.Writer, name, gateway string) error {
	tw := tar.NewWriter(w)
	sub, err := fs.Sub(images.FS, name)
	if err != nil {
		return err
	}
	if err := addTree(tw, sub, ""); err != nil {
		return fmt.Errorf("build context of %s: %w", name, err)
	}
	if name != Base {
		common, err := fs.Sub(images.FS, CommonDir)
		if err == nil {
			err = addTree(tw, common, CommonDir+"/")
		}
		if err != nil {
			return fmt.Errorf("build context of %s: %w", name, err)
		}
	}
	df, _ := fs.ReadFile(sub, "Dockerfile")
	if bytes.Contains(df, []byte(HostCADir+"/")) {
		if err := hostCAs(tw); err != nil {
			return fmt.Errorf("build context of %s: %w", name, err)
		}
	}
	if gateway != "" {
		data, err := os.ReadFile(gateway)
		if err != nil {
			return fmt.Errorf("build context of %s: svc-gateway: %w", name, err)
		}
		if err := writeFile(tw, GatewayFile, data, 0o755); err != nil {
			return err
		}
	}
	return tw.Close()
}

// hostCAs adds the host's local CA certificates under host-ca/. Behind a
// proxy that intercepts TLS, a build step fetching over HTTPS (npm) trusts
// what the host trusts. Only build stages copy them: published images never
// carry them.
func hostCAs(tw *tar.Writer) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: HostCADir + "/", Mode: 0o755, ModTime: contextTime}); err != nil {
		return err
	}
	files, err := filepath.Glob(hostCAPattern)
	if err != nil {
		return err
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := writeFile(tw, HostCADir+"/"+filepath.Base(f), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// addTree adds the files of fsys under prefix.
func addTree(tw *tar.Writer, fsys fs.FS, prefix string) error {
	if prefix != "" {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: prefix, Mode: 0o755, ModTime: contextTime}); err != nil {
			return err
		}
	}
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: prefix + p + "/", Mode: 0o755, ModTime: contextTime})
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		return writeFile(tw, prefix+p, data, modeOf(data))
	})
}

func modeOf(data []byte) int64 {
	if bytes.HasPrefix(data, []byte("#!")) {
		return 0o755
	}
	return 0o644
}

func writeFile(tw *tar.Writer, name string, data []byte, mode int64) error {
	h := &tar.Header{Typeflag: tar.TypeReg, Name: path.Clean(name), Mode: mode, Size: int64(len(data)), ModTime: contextTime}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}
