package testimage

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

type programKey struct{ dir, pkg string }

var (
	programMu sync.Mutex
	programs  = map[programKey][]byte{}
)

// compile builds p once per test process; later images reuse the bytes.
func compile(p Program) ([]byte, error) {
	dir := p.Dir
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	key := programKey{dir, p.Package}
	programMu.Lock()
	defer programMu.Unlock()
	if bin, ok := programs[key]; ok {
		return bin, nil
	}
	tmp, err := os.MkdirTemp("", "testimage-go-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "prog")
	cmd := exec.Command(goTool(), "build", "-trimpath", "-o", out, p.Package)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %v\n%s", p.Package, err, msg)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	programs[key] = bin
	return bin, nil
}

// goTool prefers the go next to the one running the tests.
func goTool() string {
	if gr := os.Getenv("GOROOT"); gr != "" {
		if p := filepath.Join(gr, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
