package spireexec

import (
	"context"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
)

// What Own asks a SPIRE server about its own trust domain.
var (
	ShowBundleArgs        = []string{"bundle", "show", "-output", "json"}
	ShowX509AuthorityArgs = []string{"localauthority", "x509", "show", "-output", "json"}
)

// Own is what a SPIRE server publishes of its own trust domain: the bundle
// it hands to workloads and peers (its trust domain is the server's), and
// which of its X.509 authorities signs now.
type Own struct {
	Bundle *spiffebundle.Bundle
	// ActiveX509 is the X.509 authority that signs now: its authority ID
	// (the hexadecimal subject key ID, as `localauthority x509 show` names
	// it) and expiry. Empty when SPIRE names none.
	ActiveX509          string
	ActiveX509ExpiresAt time.Time
	// PreparedX509 is the authority ID of the X.509 authority SPIRE has
	// prepared to follow the active one; empty when none is prepared.
	PreparedX509 string
}

// Own runs `bundle show` and `localauthority x509 show` in the pod. An
// error names the command and quotes what SPIRE answered.
func (s Server) Own(ctx context.Context) (Own, error) {
	var own Own
	out, err := s.Ask(ctx, ShowBundleArgs...)
	if err != nil {
		return own, err
	}
	if own.Bundle, err = ParseBundleShow(out); err != nil {
		return own, err
	}
	if out, err = s.Ask(ctx, ShowX509AuthorityArgs...); err != nil {
		return own, err
	}
	err = ParseX509AuthorityShow(out, &own)
	return own, err
}

// ParseBundleShow reads `spire-server bundle show -output json`.
func ParseBundleShow(out []byte) (*spiffebundle.Bundle, error) {
	var j bundleJSON
	if err := json.Unmarshal(out, &j); err != nil {
		return nil, fmt.Errorf("cannot read the output of `spire-server %s`: %w", strings.Join(ShowBundleArgs, " "), err)
	}
	return j.bundle(ShowBundleArgs)
}

// ParseX509AuthorityShow reads `spire-server localauthority x509 show
// -output json` into own's X.509 authority fields.
func ParseX509AuthorityShow(out []byte, own *Own) error {
	type state struct {
		AuthorityID string    `json:"authority_id"`
		ExpiresAt   int64JSON `json:"expires_at"`
	}
	var show struct {
		Active, Prepared *state
	}
	if err := json.Unmarshal(out, &show); err != nil {
		return fmt.Errorf("cannot read the output of `spire-server %s`: %w", strings.Join(ShowX509AuthorityArgs, " "), err)
	}
	if a := show.Active; a != nil {
		own.ActiveX509 = a.AuthorityID
		if a.ExpiresAt > 0 {
			own.ActiveX509ExpiresAt = time.Unix(int64(a.ExpiresAt), 0)
		}
	}
	if p := show.Prepared; p != nil {
		own.PreparedX509 = p.AuthorityID
	}
	return nil
}

// X509Authority is the authority of b whose authority ID is id, or nil
// when b does not hold it (an upstream authority's intermediate is not in
// the bundle, its root is).
func X509Authority(b *spiffebundle.Bundle, id string) *x509.Certificate {
	for _, cert := range b.X509Authorities() {
		if id != "" && hex.EncodeToString(cert.SubjectKeyId) == strings.ToLower(id) {
			return cert
		}
	}
	return nil
}

// ShowJWTAuthorityArgs asks SPIRE about its JWT authorities, as
// ShowX509AuthorityArgs does about its X.509 ones.
var ShowJWTAuthorityArgs = []string{"localauthority", "jwt", "show", "-output", "json"}

// Previous names the authorities SPIRE rotated away from last (the "old"
// of `localauthority x509 show` and `localauthority jwt show`; empty when it
// names none). They are the only authorities `localauthority ... revoke`
// accepts (spire v1.15 localauthority service, validateLocalAuthorityID),
// and a revoke leaves them named there (it changes only the datastore's
// bundle), so an authority SPIRE revoked and still names there is one it
// held.
type Previous struct {
	X509 string // authority ID: the hexadecimal subject key ID
	// X509Upstream is the subject key ID of the upstream authority that
	// signed X509, the only one `localauthority x509 revoke_upstream`
	// accepts.
	X509Upstream string
	JWT          string // authority ID: the key ID
}

// Previous runs both `localauthority ... show` commands in the pod.
func (s Server) Previous(ctx context.Context) (Previous, error) {
	var p Previous
	for _, ask := range []struct {
		args         []string
		id, upstream *string
	}{{ShowX509AuthorityArgs, &p.X509, &p.X509Upstream}, {ShowJWTAuthorityArgs, &p.JWT, nil}} {
		out, err := s.Ask(ctx, ask.args...)
		if err != nil {
			return p, err
		}
		var show struct {
			Old *struct {
				AuthorityID string `json:"authority_id"`
				Upstream    string `json:"upstream_authority_subject_key_id"`
			}
		}
		if err := json.Unmarshal(out, &show); err != nil {
			return p, fmt.Errorf("cannot read the output of `spire-server %s`: %w", strings.Join(ask.args, " "), err)
		}
		if show.Old != nil {
			*ask.id = show.Old.AuthorityID
			if ask.upstream != nil {
				*ask.upstream = show.Old.Upstream
			}
		}
	}
	return p, nil
}
