package edge

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/svc-dev/svc/internal/store"
)

func TestSignerTokens(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	s, err := LoadSigner(context.Background(), st, clock)
	if err != nil {
		t.Fatal(err)
	}
	// The secret is made once and kept: a second load accepts old tokens.
	again, _ := LoadSigner(context.Background(), st, clock)
	exp := now.Add(time.Hour).Unix()
	tok := s.Token("abcde12345", exp)
	if got, ok := again.Verify("abcde12345", tok); !ok || got != exp {
		t.Fatalf("valid token refused: %v %v", got, ok)
	}
	bad := []struct{ label, token string }{
		{"abcde12345-8080", tok},                                // another host
		{"abcde12345", strconv.FormatInt(exp+1, 10) + tok[10:]}, // expiry moved
		{"abcde12345", "+" + tok},                               // non-canonical expiry
		{"abcde12345", tok[:len(tok)-1]},                        // mac cut
		{"abcde12345", tok + "x"},                               // mac extended
		{"abcde12345", ""}, {"abcde12345", "."}, {"abcde12345", "x.y"},
		{"abcde12345", s.Token("abcde12345", now.Unix())},   // expires now
		{"abcde12345", s.Token("abcde12345", now.Unix()-1)}, // expired
	}
	for _, b := range bad {
		if _, ok := s.Verify(b.label, b.token); ok {
			t.Errorf("accepted %q for %s", b.token, b.label)
		}
	}
}

func TestStripCredentials(t *testing.T) {
	h := http.Header{}
	h.Set("X-Svc-Key", "sk_live_x")
	h.Set("X-Svc-Gateway-Token", "forged")
	h.Set("Authorization", "Basic dTpw")
	h.Add("Cookie", "a=1; svc_edge=tok; b=2")
	h.Add("Cookie", "svc_edge=tok")
	u, _ := url.Parse("http://x/p?a=1&svc_token=t&b=2&svc%5Ftoken=u")
	stripCredentials(h, u, true)
	if h.Get("X-Svc-Key") != "" || h.Get("X-Svc-Gateway-Token") != "" || h.Get("Authorization") != "Basic dTpw" ||
		len(h.Values("Cookie")) != 1 || h.Get("Cookie") != "a=1; b=2" || u.RawQuery != "a=1&b=2" {
		t.Fatalf("public: %v %q", h, u.RawQuery)
	}
	h.Set("Authorization", "Bearer sk_live_abc")
	stripCredentials(h, u, true)
	if h.Get("Authorization") != "" {
		t.Fatal("a workspace key passed to a public port")
	}
	h.Set("Authorization", "Basic dTpw")
	stripCredentials(h, u, false)
	if h.Get("Authorization") != "" {
		t.Fatal("Authorization passed to an instance URL")
	}
}
