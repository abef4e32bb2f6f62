package datasources

import (
	"context"
	"slices"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// fsEndpoint is a bundle endpoint as a federation relationship or a
// ClusterFederatedTrustDomain names it.
type fsEndpoint = spireexec.Endpoint

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

// fetchEndpoint asks the peer's bundle endpoint once. anchor authenticates
// an https_spiffe endpoint; nil means there is nothing to authenticate it
// with (the caller does not check then).
func fetchEndpoint(ctx context.Context, td spiffeid.TrustDomain, e fsEndpoint, anchor *spiffebundle.Bundle) (*spiffebundle.Bundle, error) {
	ctx, cancel := context.WithTimeout(ctx, fsEndpointTimeout)
	defer cancel()
	return bundlesource.FetchRelationship(ctx, e, td, anchor)
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
