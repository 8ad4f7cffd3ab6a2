package edge

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/svc-dev/svc/internal/fault"
	"github.com/svc-dev/svc/internal/hostname"
	"github.com/svc-dev/svc/internal/store"
	"github.com/svc-dev/svc/sdk"
)

// Signed URLs let a browser reach one host of an instance without the
// workspace key. The token is exp.mac with mac = HMAC-SHA256(secret,
// host label, exp): it names no key and no workspace, is valid on exactly
// one host ({id} or {id}-{port}) until exp, and survives public-port
// changes because it has nothing to do with them.
const (
	// TokenParam is the query parameter a signed URL carries.
	TokenParam = "svc_token"
	// CookieName is the host-only cookie opening a signed URL sets.
	CookieName = "svc_edge"

	defaultSignedTTL = time.Hour
	maxSignedTTL     = 24 * time.Hour
	secretMetaKey    = "edge_signing_secret"
)

// Signer mints and checks signed-URL tokens.
type Signer struct {
	secret []byte
	now    func() time.Time
}

// LoadSigner reads the installation's signing secret, made at first start.
func LoadSigner(ctx context.Context, st *store.Store, now func() time.Time) (*Signer, error) {
	b := make([]byte, 32)
	rand.Read(b)
	hexSecret, err := st.SetMetaOnce(ctx, secretMetaKey, hex.EncodeToString(b))
	if err != nil {
		return nil, err
	}
	secret, err := hex.DecodeString(hexSecret)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &Signer{secret: secret, now: now}, nil
}

func (s *Signer) mac(label string, exp int64) string {
	h := hmac.New(sha256.New, s.secret)
	h.Write([]byte("svc signed url\x00" + label + "\x00" + strconv.FormatInt(exp, 10)))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// Token is a token for label valid until exp (epoch seconds).
func (s *Signer) Token(label string, exp int64) string {
	return strconv.FormatInt(exp, 10) + "." + s.mac(label, exp)
}

// Verify returns the expiry of a token valid now for label.
func (s *Signer) Verify(label, token string) (exp int64, ok bool) {
	expStr, mac, found := strings.Cut(token, ".")
	if !found {
		return 0, false
	}
	exp, err := strconv.ParseInt(expStr, 10, 64)
	if err != nil || expStr != strconv.FormatInt(exp, 10) {
		return 0, false
	}
	if !hmac.Equal([]byte(mac), []byte(s.mac(label, exp))) {
		return 0, false
	}
	return exp, s.now().Unix() < exp
}

// Instances is what minting needs of the instance service.
type Instances interface {
	Get(ctx context.Context, ws, id string) (store.Instance, error)
}

// URLs mints signed URLs for the hosting API.
type URLs struct {
	Signer    *Signer
	Names     hostname.Namer
	Instances Instances
}

// Mint returns a signed URL for a port of an instance of ws. It works in
// any state: opening the URL of a sleeping instance wakes it.
func (u URLs) Mint(ctx context.Context, ws, id string, req sdk.SignedURLRequest) (sdk.SignedURL, error) {
	ttl := defaultSignedTTL
	if req.ExpiresInSeconds != nil {
		ttl = time.Duration(*req.ExpiresInSeconds) * time.Second
		if ttl < time.Second || ttl > maxSignedTTL {
			return sdk.SignedURL{}, fault.Invalid("expires_in_seconds must be between 1 and %d", int(maxSignedTTL.Seconds()))
		}
	}
	if req.Port != nil && (*req.Port < 1 || *req.Port > 65535) {
		return sdk.SignedURL{}, fault.Invalid("port must be between 1 and 65535")
	}
	in, err := u.Instances.Get(ctx, ws, id)
	if err != nil {
		return sdk.SignedURL{}, err
	}
	label, port := in.ID, routePort(in)
	if req.Port != nil {
		label, port = in.ID+"-"+strconv.Itoa(*req.Port), *req.Port
	}
	exp := u.Signer.now().Add(ttl).Unix()
	return sdk.SignedURL{
		URL:       u.Names.URL(label) + "/?" + TokenParam + "=" + u.Signer.Token(label, exp),
		Port:      port,
		ExpiresAt: exp,
	}, nil
}
