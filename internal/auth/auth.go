// Package auth owns workspace identity: API keys (sk_live_ plus 32 base62
// characters, stored only as a SHA-256 hash), their lookup, and the first
// workspace an installation creates for itself.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"

	"github.com/svc-dev/svc/internal/store"
)

// KeyPrefix starts every API key.
const KeyPrefix = "sk_live_"

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Random returns n characters drawn uniformly from alphabet.
func Random(n int, alphabet string) string {
	b := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range b {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(err) // crypto/rand never fails on Linux
		}
		b[i] = alphabet[v.Int64()]
	}
	return string(b)
}

// NewKey returns a fresh API key.
func NewKey() string { return KeyPrefix + Random(32, base62) }

// Hash is what the store keeps of a key. Keys carry 190 bits of entropy,
// so an unsalted SHA-256 is enough to make a leaked table useless.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// WellFormed reports whether key looks like an API key, so garbage is
// refused without a database read.
func WellFormed(key string) bool {
	if len(key) != len(KeyPrefix)+32 || subtle.ConstantTimeCompare([]byte(key[:len(KeyPrefix)]), []byte(KeyPrefix)) != 1 {
		return false
	}
	for _, c := range key[len(KeyPrefix):] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// ErrUnknownKey is returned for a key that matches no workspace.
var ErrUnknownKey = errors.New("unknown key")

// Lookup returns the workspace of a key.
func Lookup(ctx context.Context, st *store.Store, key string) (store.Workspace, error) {
	if !WellFormed(key) {
		return store.Workspace{}, ErrUnknownKey
	}
	w, err := st.WorkspaceByKeyHash(ctx, Hash(key))
	if errors.Is(err, store.ErrNotFound) {
		return w, ErrUnknownKey
	}
	return w, err
}

// CreateWorkspace makes a workspace and its first key, returned once.
func CreateWorkspace(ctx context.Context, st *store.Store, name string) (store.Workspace, string, error) {
	w, err := st.CreateWorkspace(ctx, "ws_"+Random(16, "0123456789abcdefghijklmnopqrstuvwxyz"), name)
	if err != nil {
		return w, "", err
	}
	key, err := AddKey(ctx, st, w.ID)
	return w, key, err
}

// AddKey creates another key for a workspace and returns it once.
func AddKey(ctx context.Context, st *store.Store, workspaceID string) (string, error) {
	key := NewKey()
	if err := st.CreateAPIKey(ctx, "key_"+Random(16, "0123456789abcdefghijklmnopqrstuvwxyz"), workspaceID, Hash(key), key[:len(KeyPrefix)+4]); err != nil {
		return "", err
	}
	return key, nil
}

// KeyFile is where the first start writes the key, mode 0600.
func KeyFile(dataDir string) string { return filepath.Join(dataDir, "api-key") }

// Bootstrap makes the installation's first workspace and key on the first
// start and writes the key to KeyFile. Later starts find the workspace and
// return created=false with no key (it is never stored in clear).
func Bootstrap(ctx context.Context, st *store.Store, dataDir string) (key string, created bool, err error) {
	if id, err := st.Meta(ctx, "bootstrap_workspace"); err != nil || id != "" {
		return "", false, err
	}
	w, key, err := CreateWorkspace(ctx, st, "default")
	if err != nil {
		return "", false, err
	}
	if id, err := st.SetMetaOnce(ctx, "bootstrap_workspace", w.ID); err != nil || id != w.ID {
		return "", false, err // another process bootstrapped first
	}
	if err := os.WriteFile(KeyFile(dataDir), []byte(key+"\n"), 0o600); err != nil {
		return "", false, fmt.Errorf("write key file: %w", err)
	}
	return key, true, nil
}
