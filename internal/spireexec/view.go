package spireexec

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// What View asks a SPIRE server: two commands for all trust domains,
// instead of one `federation show` and one `bundle list -id` each.
var (
	ListFederationArgs = []string{"federation", "list", "-output", "json"}
	ListBundlesArgs    = []string{"bundle", "list", "-output", "json"}
)

// viewCommandTimeout bounds one spire-server command of View.
const viewCommandTimeout = 30 * time.Second

// Bundle endpoint profiles, as SPIRE's federation relationships and
// ClusterFederatedTrustDomain name them.
const (
	ProfileHTTPSSPIFFE = "https_spiffe"
	ProfileHTTPSWeb    = "https_web"
)

// Endpoint is a bundle endpoint as a federation relationship or a
// ClusterFederatedTrustDomain names it.
type Endpoint struct {
	URL, Profile string // Profile is ProfileHTTPSSPIFFE or ProfileHTTPSWeb
	EndpointID   string // https_spiffe only
}

func (e Endpoint) String() string {
	if e.Profile == ProfileHTTPSSPIFFE {
		return fmt.Sprintf("%s (https_spiffe, %s)", e.URL, e.EndpointID)
	}
	return fmt.Sprintf("%s (%s)", e.URL, e.Profile)
}

// View is what one SPIRE server holds: its federation relationships and
// federated bundles, by trust domain name.
type View struct {
	Relationships map[string]Endpoint
	Bundles       map[string]*spiffebundle.Bundle
}

// View runs `federation list` and `bundle list` in the pod. An error names
// the command and quotes what SPIRE answered.
func (s Server) View(ctx context.Context) (View, error) {
	var view View
	out, err := s.Ask(ctx, ListFederationArgs...)
	if err == nil {
		view.Relationships, err = ParseFederationList(out)
	}
	if err != nil {
		return view, err
	}
	if out, err = s.Ask(ctx, ListBundlesArgs...); err == nil {
		view.Bundles, err = ParseBundleList(out)
	}
	return view, err
}

// Ask runs one read-only spire-server command in the pod, bounded by
// viewCommandTimeout. An error names the command and quotes what SPIRE
// answered.
func (s Server) Ask(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, viewCommandTimeout)
	defer cancel()
	out, err := s.Run(ctx, args...)
	var exit *kube.ExitError
	if errors.As(err, &exit) && exit.Stderr != "" {
		return nil, fmt.Errorf("`spire-server %s` failed: %s", strings.Join(args, " "), OneLine(exit.Stderr))
	}
	return out, err
}

// int64JSON is a 64-bit protobuf integer in protojson, which quotes it.
type int64JSON int64

func (n *int64JSON) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(string(bytes.Trim(b, `"`)), 10, 64)
	*n = int64JSON(v)
	return err
}

// bundleJSON is spire-api-sdk's types.Bundle as `-output json` prints it.
type bundleJSON struct {
	TrustDomain     string `json:"trust_domain"`
	X509Authorities []struct {
		ASN1 []byte `json:"asn1"`
	} `json:"x509_authorities"`
	JWTAuthorities []struct {
		PublicKey []byte `json:"public_key"`
		KeyID     string `json:"key_id"`
	} `json:"jwt_authorities"`
	RefreshHint    int64JSON `json:"refresh_hint"`
	SequenceNumber int64JSON `json:"sequence_number"`
}

// ParseFederationList reads `spire-server federation list -output json`.
func ParseFederationList(out []byte) (map[string]Endpoint, error) {
	var list struct {
		Relationships []struct {
			TrustDomain       string    `json:"trust_domain"`
			BundleEndpointURL string    `json:"bundle_endpoint_url"`
			HTTPSWeb          *struct{} `json:"https_web"`
			HTTPSSPIFFE       *struct {
				EndpointSPIFFEID string `json:"endpoint_spiffe_id"`
			} `json:"https_spiffe"`
		} `json:"federation_relationships"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("cannot read the output of `spire-server %s`: %w", strings.Join(ListFederationArgs, " "), err)
	}
	rels := make(map[string]Endpoint, len(list.Relationships))
	for _, r := range list.Relationships {
		e := Endpoint{URL: r.BundleEndpointURL}
		switch {
		case r.HTTPSSPIFFE != nil:
			e.Profile, e.EndpointID = ProfileHTTPSSPIFFE, r.HTTPSSPIFFE.EndpointSPIFFEID
		case r.HTTPSWeb != nil:
			e.Profile = ProfileHTTPSWeb
		}
		rels[r.TrustDomain] = e
	}
	return rels, nil
}

// ParseBundleList reads `spire-server bundle list -output json`: the X.509
// and JWT authorities, refresh hint and sequence number of every federated
// bundle.
func ParseBundleList(out []byte) (map[string]*spiffebundle.Bundle, error) {
	var list struct {
		Bundles []bundleJSON `json:"bundles"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("cannot read the output of `spire-server %s`: %w", strings.Join(ListBundlesArgs, " "), err)
	}
	bundles := make(map[string]*spiffebundle.Bundle, len(list.Bundles))
	for _, j := range list.Bundles {
		b, err := j.bundle(ListBundlesArgs)
		if err != nil {
			return nil, err
		}
		bundles[j.TrustDomain] = b
	}
	return bundles, nil
}

// bundle converts j, printed by `spire-server args...`, which errors name.
func (j bundleJSON) bundle(args []string) (*spiffebundle.Bundle, error) {
	td, err := spiffeid.TrustDomainFromString(j.TrustDomain)
	if err != nil {
		return nil, fmt.Errorf("`spire-server %s` prints a bundle of %q: %w", strings.Join(args, " "), j.TrustDomain, err)
	}
	b := spiffebundle.New(td)
	for i, a := range j.X509Authorities {
		cert, err := x509.ParseCertificate(a.ASN1)
		if err != nil {
			return nil, fmt.Errorf("X.509 authority %d of the bundle of %q: %w", i, j.TrustDomain, err)
		}
		b.AddX509Authority(cert)
	}
	for _, a := range j.JWTAuthorities {
		// A key that does not parse verifies no JWT-SVID; leaving it out
		// keeps the X.509 checks working, and a comparison of authorities
		// then finds the bundle different.
		if key, err := x509.ParsePKIXPublicKey(a.PublicKey); err == nil && a.KeyID != "" {
			_ = b.AddJWTAuthority(a.KeyID, key)
		}
	}
	if j.RefreshHint > 0 {
		b.SetRefreshHint(time.Duration(j.RefreshHint) * time.Second)
	}
	if j.SequenceNumber > 0 {
		b.SetSequenceNumber(uint64(j.SequenceNumber))
	}
	return b, nil
}

// SetBundle replaces SPIRE's bundle of td with bundle, a SPIFFE bundle
// (JWKS, `-format spiffe`), sent on standard input to `spire-server bundle
// set`. It does not retry: the caller decides what a failure means.
func (s Server) SetBundle(ctx context.Context, td string, bundle []byte) error {
	_, _, err := s.Client.ExecWithInput(ctx, s.Namespace, s.Pod, s.Container,
		[]string{"spire-server", "bundle", "set", "-format", "spiffe", "-id", "spiffe://" + td}, bytes.NewReader(bundle))
	return err
}

// OneLine keeps a command's error output to one readable line.
func OneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
