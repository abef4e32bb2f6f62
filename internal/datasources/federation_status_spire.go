package datasources

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// What the data source asks each SPIRE server: two commands for all trust
// domains, instead of one `federation show` and one `bundle list -id` each.
var (
	fsFederationListArgs = []string{"federation", "list", "-output", "json"}
	fsBundleListArgs     = []string{"bundle", "list", "-output", "json"}
)

// fsSpireTimeout bounds one spire-server command.
const fsSpireTimeout = 30 * time.Second

// fsEndpoint is a bundle endpoint as a federation relationship or a
// ClusterFederatedTrustDomain names it.
type fsEndpoint struct {
	URL, Profile string
	EndpointID   string // https_spiffe only
}

func (e fsEndpoint) String() string {
	if e.Profile == bundlesource.ProfileHTTPSSPIFFE {
		return fmt.Sprintf("%s (https_spiffe, %s)", e.URL, e.EndpointID)
	}
	return fmt.Sprintf("%s (%s)", e.URL, e.Profile)
}

// fsCFTD is what the data source uses of a ClusterFederatedTrustDomain.
type fsCFTD struct {
	Name, TrustDomain string
	Endpoint          fsEndpoint
	Bundle            string // spec.trustDomainBundle, the bootstrap bundle
}

func fsCFTDFromObject(obj *unstructured.Unstructured) fsCFTD {
	str := func(fields ...string) string {
		v, _, _ := unstructured.NestedString(obj.Object, append([]string{"spec"}, fields...)...)
		return v
	}
	return fsCFTD{
		Name:        obj.GetName(),
		TrustDomain: str("trustDomain"),
		Endpoint: fsEndpoint{
			URL:        str("bundleEndpointURL"),
			Profile:    str("bundleEndpointProfile", "type"),
			EndpointID: str("bundleEndpointProfile", "endpointSPIFFEID"),
		},
		Bundle: str("trustDomainBundle"),
	}
}

// fsSpireView is what one SPIRE server holds: its federation relationships
// and federated bundles, by trust domain.
type fsSpireView struct {
	Relationships map[string]fsEndpoint
	Bundles       map[string]*spiffebundle.Bundle
}

// fsInt64 is a 64-bit protobuf integer in protojson, which quotes it.
type fsInt64 int64

func (n *fsInt64) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(string(bytes.Trim(b, `"`)), 10, 64)
	*n = fsInt64(v)
	return err
}

// fsBundleJSON is spire-api-sdk's types.Bundle as `-output json` prints it.
type fsBundleJSON struct {
	TrustDomain     string `json:"trust_domain"`
	X509Authorities []struct {
		ASN1 []byte `json:"asn1"`
	} `json:"x509_authorities"`
	RefreshHint    fsInt64 `json:"refresh_hint"`
	SequenceNumber fsInt64 `json:"sequence_number"`
}

// parseFederationList reads `spire-server federation list -output json`.
func parseFederationList(out []byte) (map[string]fsEndpoint, error) {
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
		return nil, fmt.Errorf("cannot read the output of `spire-server %s`: %w", joinArgs(fsFederationListArgs), err)
	}
	rels := make(map[string]fsEndpoint, len(list.Relationships))
	for _, r := range list.Relationships {
		e := fsEndpoint{URL: r.BundleEndpointURL}
		switch {
		case r.HTTPSSPIFFE != nil:
			e.Profile, e.EndpointID = bundlesource.ProfileHTTPSSPIFFE, r.HTTPSSPIFFE.EndpointSPIFFEID
		case r.HTTPSWeb != nil:
			e.Profile = bundlesource.ProfileHTTPSWeb
		}
		rels[r.TrustDomain] = e
	}
	return rels, nil
}

// parseBundleList reads `spire-server bundle list -output json`: the X.509
// authorities, refresh hint and sequence number of every federated bundle
// (JWT authorities play no part in the checks).
func parseBundleList(out []byte) (map[string]*spiffebundle.Bundle, error) {
	var list struct {
		Bundles []fsBundleJSON `json:"bundles"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("cannot read the output of `spire-server %s`: %w", joinArgs(fsBundleListArgs), err)
	}
	bundles := make(map[string]*spiffebundle.Bundle, len(list.Bundles))
	for _, j := range list.Bundles {
		td, err := spiffeid.TrustDomainFromString(j.TrustDomain)
		if err != nil {
			return nil, fmt.Errorf("`spire-server %s` lists a bundle of %q: %w", joinArgs(fsBundleListArgs), j.TrustDomain, err)
		}
		b := spiffebundle.New(td)
		for i, a := range j.X509Authorities {
			cert, err := x509.ParseCertificate(a.ASN1)
			if err != nil {
				return nil, fmt.Errorf("X.509 authority %d of the bundle of %q: %w", i, j.TrustDomain, err)
			}
			b.AddX509Authority(cert)
		}
		if j.RefreshHint > 0 {
			b.SetRefreshHint(time.Duration(j.RefreshHint) * time.Second)
		}
		if j.SequenceNumber > 0 {
			b.SetSequenceNumber(uint64(j.SequenceNumber))
		}
		bundles[j.TrustDomain] = b
	}
	return bundles, nil
}

// askSpire runs both commands in the SPIRE server pod.
func askSpire(ctx context.Context, s spireexec.Server) (fsSpireView, error) {
	run := func(args []string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, fsSpireTimeout)
		defer cancel()
		out, err := s.Run(ctx, args...)
		var exit *kube.ExitError
		if errors.As(err, &exit) && exit.Stderr != "" {
			return nil, fmt.Errorf("`spire-server %s` failed: %s", joinArgs(args), trimOutput(exit.Stderr))
		}
		return out, err
	}
	var view fsSpireView
	out, err := run(fsFederationListArgs)
	if err == nil {
		view.Relationships, err = parseFederationList(out)
	}
	if err != nil {
		return view, err
	}
	if out, err = run(fsBundleListArgs); err == nil {
		view.Bundles, err = parseBundleList(out)
	}
	return view, err
}

// fetchEndpoint asks the peer's bundle endpoint once. anchor authenticates
// an https_spiffe endpoint; nil means there is nothing to authenticate it
// with (the caller does not check then).
func fetchEndpoint(ctx context.Context, td spiffeid.TrustDomain, e fsEndpoint, anchor *spiffebundle.Bundle) (*spiffebundle.Bundle, error) {
	src := bundlesource.Endpoint{URL: e.URL, Profile: e.Profile}
	if e.Profile == bundlesource.ProfileHTTPSSPIFFE {
		id, err := spiffeid.FromString(e.EndpointID)
		if err != nil {
			return nil, fmt.Errorf("endpoint SPIFFE ID %q: %w", e.EndpointID, err)
		}
		src.EndpointID, src.Bootstrap = id, anchor
	}
	ctx, cancel := context.WithTimeout(ctx, fsEndpointTimeout)
	defer cancel()
	return src.Fetch(ctx, td)
}

// fsEndpointTimeout bounds one fetch of a peer's bundle endpoint: the data
// source reports what it finds now, it does not wait for a peer to recover.
const fsEndpointTimeout = 15 * time.Second

// endpointAnchor is the bundle that authenticates an https_spiffe endpoint:
// the one SPIRE holds for the endpoint SPIFFE ID's trust domain (what SPIRE
// itself uses), else the ClusterFederatedTrustDomain's bootstrap bundle when
// it is of that trust domain.
func endpointAnchor(e fsEndpoint, held map[string]*spiffebundle.Bundle, cftd *fsCFTD) *spiffebundle.Bundle {
	id, err := spiffeid.FromString(e.EndpointID)
	if err != nil {
		return nil
	}
	if b := held[id.TrustDomain().Name()]; b != nil {
		return b
	}
	if cftd == nil || cftd.Bundle == "" || cftd.TrustDomain != id.TrustDomain().Name() {
		return nil
	}
	b, err := trustbundle.Parse(id.TrustDomain(), []byte(cftd.Bundle))
	if err != nil {
		return nil
	}
	return b
}

// sameX509Authorities reports whether a and b hold the same X.509
// authorities (the fingerprints come sorted).
func sameX509Authorities(a, b *spiffebundle.Bundle) bool {
	return slices.Equal(trustbundle.FingerprintsSHA256(a), trustbundle.FingerprintsSHA256(b))
}
