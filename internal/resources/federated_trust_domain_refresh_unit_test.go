package resources

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// listedFederatedTrustDomain is one item of a LIST of
// ClusterFederatedTrustDomains as the API server writes it after the
// provider's server-side apply (field manager "zerotrust") created it, with
// className set; the managed fields take most of the bytes.
func listedFederatedTrustDomain(name string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"spire.spiffe.io/v1alpha1","kind":"ClusterFederatedTrustDomain",`+
		`"metadata":{"creationTimestamp":"2026-11-29T10:02:17Z","generation":1,`+
		`"managedFields":[{"apiVersion":"spire.spiffe.io/v1alpha1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{`+
		`"f:bundleEndpointProfile":{"f:endpointSPIFFEID":{},"f:type":{}},"f:bundleEndpointURL":{},"f:className":{},`+
		`"f:trustDomain":{}}},"manager":"zerotrust","operation":"Apply","time":"2026-11-29T10:02:17Z"}],`+
		`"name":%q,"resourceVersion":"48213","uid":"5b0c6f0e-8f43-4a55-9d7e-2f1d3c9a7b21"},`+
		`"spec":{"bundleEndpointProfile":{"endpointSPIFFEID":"spiffe://%s.example.org/spire/server","type":"https_spiffe"},`+
		`"bundleEndpointURL":"https://spire-bundle.%s.example.org:8443","className":"zerotrust",`+
		`"trustDomain":"%s.example.org"}}`, name, name, name, name)
}

// BenchmarkFederatedTrustDomainRefreshObject is a refresh's work for one
// listed object below the fast path's Refresh hook, SPIRE's side aside: the
// item decoded as GetForRefresh serves it, the model set from it, and the
// ownership record of spec.className.
func BenchmarkFederatedTrustDomainRefreshObject(b *testing.B) {
	ctx := b.Context()
	raw := listedFederatedTrustDomain("peer-0042")
	obj, err := kube.DecodeListItem(raw, kube.ClusterFederatedTrustDomain)
	if err != nil {
		b.Fatal(err)
	}
	prior, diags := federatedTrustDomainStateFromObject(ctx, types.StringValue("east"), obj)
	if diags.HasError() {
		b.Fatal(diags)
	}
	b.ReportAllocs()
	for b.Loop() {
		obj, err := kube.DecodeListItem(raw, kube.ClusterFederatedTrustDomain)
		if err != nil {
			b.Fatal(err)
		}
		state := prior
		if diags := setFederatedTrustDomainFromObject(ctx, &state, obj); diags.HasError() {
			b.Fatal(diags)
		}
		if rec := classNameOwnership(appliesClassName(obj, "zerotrust")).value(); len(rec) == 0 {
			b.Fatal("no ownership record")
		}
	}
}
