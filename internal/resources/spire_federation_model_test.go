package resources

import (
	"context"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func federationSpecs() map[string]federationSpec {
	return map[string]federationSpec{
		"defaults": {Profile: profileHTTPSSPIFFE, RefreshHint: 300, ManagedRoute: true, Peers: map[string]federationPeer{}},
		"https_spiffe with peers and enhancement fields": {
			Profile: profileHTTPSSPIFFE, RefreshHint: 600, Port: 9443, Address: "spire.example.org", ManagedRoute: false,
			Peers: map[string]federationPeer{
				"west.example.org":  {URL: "https://spire.west.example.org", Profile: profileHTTPSSPIFFE, EndpointSPIFFEID: "spiffe://west.example.org/spire/server"},
				"north.example.org": {URL: "https://bundles.north.example.org", Profile: profileHTTPSWeb},
			},
		},
		"acme": {
			Profile: profileHTTPSWeb, RefreshHint: 300, ManagedRoute: true, Peers: map[string]federationPeer{},
			ACME: &federationACME{DirectoryURL: "https://acme.example.org/dir", DomainName: "f.example.org", Email: "a@example.org", TOSAccepted: true},
		},
		"serving cert": {
			Profile: profileHTTPSWeb, RefreshHint: 300, ManagedRoute: true, Peers: map[string]federationPeer{},
			ServingCert: &federationServingCert{FileSyncInterval: 3600, ExternalSecretRef: "federation-tls"},
		},
	}
}

// TestFederationSpecRoundTrip: what is sent reads back as the same spec,
// both through the object and through the Terraform model.
func TestFederationSpecRoundTrip(t *testing.T) {
	ctx := context.Background()
	for name, spec := range federationSpecs() {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "operator.openshift.io/v1alpha1", "kind": "SpireServer",
			"spec": map[string]any{"federation": spec.object()},
		}}
		// Through JSON, as the API server returns it.
		raw, err := obj.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		back := &unstructured.Unstructured{}
		if err := back.UnmarshalJSON(raw); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, found := specFromObject(back)
		if !found || !reflect.DeepEqual(got, spec) {
			t.Errorf("%s: object round trip = %+v (found %v), want %+v", name, got, found, spec)
		}

		var m spireFederationResourceModel
		if d := spec.setModel(&m, func(string) bool { return true }, false); d.HasError() {
			t.Fatalf("%s: setModel: %v", name, d)
		}
		fromModel, d := specFromModel(ctx, m)
		if d.HasError() {
			t.Fatalf("%s: specFromModel: %v", name, d)
		}
		if len(spec.Peers) == 0 && fromModel.Peers == nil {
			fromModel.Peers = map[string]federationPeer{}
		}
		if !reflect.DeepEqual(fromModel, spec) {
			t.Errorf("%s: model round trip = %+v, want %+v", name, fromModel, spec)
		}
	}
}

// TestFederationObjectShape pins what the CRD needs: optional enhancement
// fields and federatesWith only when set, booleans as strings, peers sorted.
func TestFederationObjectShape(t *testing.T) {
	defaults := federationSpecs()["defaults"].object()
	be, _, _ := unstructured.NestedMap(defaults, "bundleEndpoint")
	for _, field := range []string{"port", "address", "httpsWeb"} {
		if _, ok := be[field]; ok {
			t.Errorf("defaults: bundleEndpoint.%s sent, want it left out", field)
		}
	}
	if _, ok := defaults["federatesWith"]; ok {
		t.Error("defaults: federatesWith sent without entries; the CRD wants at least one")
	}
	if defaults["managedRoute"] != "true" {
		t.Errorf("managedRoute = %#v, want the string \"true\"", defaults["managedRoute"])
	}
	acme := federationSpecs()["acme"].object()
	if v, _, _ := unstructured.NestedString(acme, "bundleEndpoint", "httpsWeb", "acme", "tosAccepted"); v != "true" {
		t.Errorf("tosAccepted = %q, want the string \"true\"", v)
	}
	peers, _, _ := unstructured.NestedSlice(federationSpecs()["https_spiffe with peers and enhancement fields"].object(), "federatesWith")
	var order []string
	for _, p := range peers {
		entry, _ := p.(map[string]any)
		td, _, _ := unstructured.NestedString(entry, "trustDomain")
		order = append(order, td)
	}
	if !reflect.DeepEqual(order, []string{"north.example.org", "west.example.org"}) {
		t.Errorf("federatesWith order = %v, want sorted by trust domain", order)
	}
	if first, _ := peers[0].(map[string]any); first["endpointSpiffeId"] != nil {
		t.Error("https_web peer carries endpointSpiffeId")
	}
}
