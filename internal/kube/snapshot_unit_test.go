package kube

import (
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// listedFederatedTrustDomain is one item of a LIST of
// ClusterFederatedTrustDomains as the API server writes it after the
// provider's server-side apply (field manager "zerotrust") created it: the
// managed fields take most of the bytes.
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

// DecodeListItem serves what a full decode of the item holds.
func TestDecodeListItem(t *testing.T) {
	raw := listedFederatedTrustDomain("peer-0042")
	want := &unstructured.Unstructured{}
	if err := want.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeListItem(raw, ClusterFederatedTrustDomain)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Object, want.Object) {
		t.Fatalf("DecodeListItem = %v, want %v", got.Object, want.Object)
	}
}

// BenchmarkDecodeListItem is GetForRefresh's work for each listed object.
func BenchmarkDecodeListItem(b *testing.B) {
	raw := listedFederatedTrustDomain("peer-0042")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeListItem(raw, ClusterFederatedTrustDomain); err != nil {
			b.Fatal(err)
		}
	}
}
