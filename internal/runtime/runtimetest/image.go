package runtimetest

import (
	"io/fs"

	"github.com/svc-dev/svc/internal/testimage"
)

// The suite image's main process prints a boot line (and one to stderr),
// then a tick every half second. EXIT_WITH=n makes it exit with n at once;
// IGNORE_TERM=1 makes it ignore the stop signal.
const entrypoint = `#!/bin/sh
echo "boot mark=$SVC_TEST_MARK"
echo "boot on stderr" >&2
if [ -n "$EXIT_WITH" ]; then echo "exiting with $EXIT_WITH"; exit "$EXIT_WITH"; fi
if [ -n "$IGNORE_TERM" ]; then trap '' TERM; else trap 'echo stopping; exit 0' TERM; fi
i=0
while :; do
	i=$((i+1))
	echo "tick $i"
	sleep 0.5 &
	wait $!
done
`

// Seed content the image ships in its home directories; the suite checks
// it appears on the instance disk with owners and modes kept.
const (
	seedFile    = "/home/svc/seed.txt"
	seedContent = "seeded from the image\n"
	rootFile    = "/root/.seedrc"
)

// ImageOptions is the image the suite runs. A driver whose nodes cannot pull
// from the suite's loopback registry pushes it somewhere they can (with
// testimage.Push) and passes the reference to Run.
func ImageOptions() testimage.Options {
	return testimage.Options{
		Files: []testimage.File{
			{Path: "/svc-test/entrypoint.sh", Content: []byte(entrypoint), Mode: 0o755},
			{Path: "/home/svc", Mode: fs.ModeDir | 0o750, UID: 1000, GID: 1000},
			{Path: seedFile, Content: []byte(seedContent), Mode: 0o640, UID: 1000, GID: 1000},
			{Path: "/home/svc/link", Content: []byte("seed.txt"), Mode: fs.ModeSymlink, UID: 1000, GID: 1000},
			{Path: rootFile, Content: []byte("export SEEDED=1\n"), Mode: 0o600},
		},
		Env:        []string{"IMAGE_ENV=from-image"},
		Entrypoint: []string{"/svc-test/entrypoint.sh"},
		WorkingDir: "/",
	}
}
