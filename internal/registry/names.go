package registry

import (
	"fmt"
	"regexp"
	"strings"
)

// Repository names are chosen by svcd (ws/<workspace-id>/<template>,
// system/<template>), so a bad one is a caller bug, reported as a plain error.
// The grammar is distribution's path component grammar; the length leaves
// room for host:port in the 255-character reference dockerd parses.
var (
	componentRE = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	tagRE       = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	digestRE    = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
)

const maxRepoLen = 200

// ValidRepo reports whether repo is a repository name this registry accepts.
func ValidRepo(repo string) error {
	if repo == "" || len(repo) > maxRepoLen {
		return fmt.Errorf("registry: repository name %q must be 1 to %d characters", repo, maxRepoLen)
	}
	for _, c := range strings.Split(repo, "/") {
		if !componentRE.MatchString(c) {
			return fmt.Errorf("registry: invalid repository name %q", repo)
		}
	}
	return nil
}

func validTag(tag string) error {
	if !tagRE.MatchString(tag) {
		return fmt.Errorf("registry: invalid tag %q", tag)
	}
	return nil
}

func validDigest(digest string) error {
	if !digestRE.MatchString(digest) {
		return fmt.Errorf("registry: invalid digest %q", digest)
	}
	return nil
}
