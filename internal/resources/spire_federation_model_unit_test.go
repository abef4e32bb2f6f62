package resources

import (
	"context"
	"reflect"
	"sort"
	"testing"

	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"

	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func fedPtr[T any](v T) *T { return &v }

// federationSpecs are specs with every field set, as a plan holds them (the
// schema's defaults filled in) and as the API server returns them (the CRD's
// defaults filled in).
func federationSpecs() map[string]federationSpec {
	return map[string]federationSpec{
		"defaults": {Profile: spireexec.ProfileHTTPSSPIFFE, RefreshHint: fedPtr(int64(300)), ManagedRoute: fedPtr(true)},
		"https_spiffe with peers": {
			Profile: spireexec.ProfileHTTPSSPIFFE, RefreshHint: fedPtr(int64(600)), ManagedRoute: fedPtr(false),
			Peers: map[string]federationPeer{
				"west.example.org":  {URL: "https://spire.west.example.org", Profile: spireexec.ProfileHTTPSSPIFFE, EndpointSPIFFEID: "spiffe://west.example.org/spire/server"},
				"north.example.org": {URL: "https://bundles.north.example.org", Profile: spireexec.ProfileHTTPSWeb},
			},
		},
		"acme": {
			Profile: spireexec.ProfileHTTPSWeb, RefreshHint: fedPtr(int64(300)), ManagedRoute: fedPtr(true),
			ACME: &federationACME{DirectoryURL: "https://acme.example.org/dir", DomainName: "f.example.org", Email: "a@example.org", TOSAccepted: fedPtr(true)},
		},
		"serving cert": {
			Profile: spireexec.ProfileHTTPSWeb, RefreshHint: fedPtr(int64(300)), ManagedRoute: fedPtr(true),
			ServingCert: &federationServingCert{FileSyncInterval: fedPtr(int64(3600)), ExternalSecretRef: "federation-tls"},
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
		if d := spec.setModel(&m, true, false); d.HasError() {
			t.Fatalf("%s: setModel: %v", name, d)
		}
		fromModel, d := specFromModel(ctx, m)
		if d.HasError() {
			t.Fatalf("%s: specFromModel: %v", name, d)
		}
		if !reflect.DeepEqual(fromModel, spec) {
			t.Errorf("%s: model round trip = %+v, want %+v", name, fromModel, spec)
		}
	}
}

// TestFederationObjectShape pins what the released CRD needs: booleans as
// strings, federatesWith only with entries and sorted, and nothing the
// configuration left to the CRD's defaults.
func TestFederationObjectShape(t *testing.T) {
	// A configuration that sets nothing sends only the required, empty
	// bundleEndpoint: the API server fills in profile, refreshHint and
	// managedRoute.
	if got := (federationSpec{}).object(); !reflect.DeepEqual(got, map[string]any{"bundleEndpoint": map[string]any{}}) {
		t.Errorf("unset spec sends %v, want only an empty bundleEndpoint", got)
	}
	// https_web with nothing but the certificate source: no tosAccepted, no
	// fileSyncInterval.
	web := federationSpec{Profile: spireexec.ProfileHTTPSWeb, ServingCert: &federationServingCert{}}
	if got, _, _ := unstructured.NestedMap(web.object(), "bundleEndpoint", "httpsWeb"); !reflect.DeepEqual(got, map[string]any{"servingCert": map[string]any{}}) {
		t.Errorf("serving_cert = {} sends httpsWeb %v, want an empty servingCert", got)
	}
	acme := federationSpecs()["acme"].object()
	if v, _, _ := unstructured.NestedString(acme, "bundleEndpoint", "httpsWeb", "acme", "tosAccepted"); v != "true" {
		t.Errorf("tosAccepted = %q, want the string \"true\"", v)
	}
	withPeers := federationSpecs()["https_spiffe with peers"].object()
	if withPeers["managedRoute"] != "false" {
		t.Errorf("managedRoute = %#v, want the string \"false\"", withPeers["managedRoute"])
	}
	peers, _, _ := unstructured.NestedSlice(withPeers, "federatesWith")
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
	if _, ok := federationSpecs()["defaults"].object()["federatesWith"]; ok {
		t.Error("federatesWith sent without entries; the CRD wants at least one")
	}
}

// TestFederationUnsetReadsAsCRDDefaults: a field absent from the object (as
// the API server would default it) reads as the CRD's default in the model,
// so a plan against the schema's equal defaults is empty; optional fields
// without a default read as null.
func TestFederationUnsetReadsAsCRDDefaults(t *testing.T) {
	var m spireFederationResourceModel
	spec := federationSpec{Profile: spireexec.ProfileHTTPSWeb, ACME: &federationACME{DirectoryURL: "https://acme.example.org/dir", DomainName: "f.example.org", Email: "a@example.org"}}
	if d := spec.setModel(&m, false, false); d.HasError() {
		t.Fatal(d)
	}
	want := map[string]any{
		"profile": spireexec.ProfileHTTPSWeb, "refresh_hint": int64(defaultRefreshHint), "managed_route": true, "tos_accepted": false,
	}
	objectOpts := basetypes.ObjectAsOptions{}
	var be federationBundleEndpointModel
	var web federationHTTPSWebModel
	var acme federationACMEModel
	if d := m.BundleEndpoint.As(context.Background(), &be, objectOpts); d.HasError() {
		t.Fatal(d)
	}
	_ = be.HTTPSWeb.As(context.Background(), &web, objectOpts)
	_ = web.ACME.As(context.Background(), &acme, objectOpts)
	got := map[string]any{
		"profile": be.Profile.ValueString(), "refresh_hint": be.RefreshHint.ValueInt64(),
		"managed_route": m.ManagedRoute.ValueBool(), "tos_accepted": acme.TOSAccepted.ValueBool(),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("unset fields read as %v, want the CRD's defaults %v", got, want)
	}
	if !web.ServingCert.IsNull() || !m.FederatesWith.IsNull() {
		t.Errorf("serving_cert %v, federates_with %v: want null", web.ServingCert, m.FederatesWith)
	}
}

// TestFederationSchemaFollowsReleasedCRD: the bundle endpoint offers only
// what the released SpireServer CRD declares. The enhancement proposal's
// port and address never shipped (server-side apply refuses them as "field
// not declared in schema"). A test cannot show Terraform refusing them in a
// configuration: it drops unknown keys of an object value without a word.
func TestFederationSchemaFollowsReleasedCRD(t *testing.T) {
	var resp fwresource.SchemaResponse
	NewSpireFederationResource().Schema(context.Background(), fwresource.SchemaRequest{}, &resp)
	be, ok := resp.Schema.Attributes["bundle_endpoint"].(schema.SingleNestedAttribute)
	if !ok {
		t.Fatalf("bundle_endpoint is %T", resp.Schema.Attributes["bundle_endpoint"])
	}
	var names []string
	for name := range be.Attributes {
		names = append(names, name)
	}
	sort.Strings(names)
	if want := []string{"https_web", "profile", "refresh_hint"}; !reflect.DeepEqual(names, want) {
		t.Errorf("bundle_endpoint attributes = %v, want %v (the released CRD's profile, refreshHint, httpsWeb)", names, want)
	}
	if _, ok := federationTypes().bundleEndpoint["port"]; ok {
		t.Error("the model still carries port")
	}
}
