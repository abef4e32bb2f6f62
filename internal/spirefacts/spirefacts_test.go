package spirefacts

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

func object(spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "cluster"}, "spec": spec}}
}

func TestRouteURL(t *testing.T) {
	route := func(spec, status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"spec": spec, "status": status}}
	}
	cases := map[string]struct {
		route *unstructured.Unstructured
		want  string
	}{
		"spec.host": {route(map[string]any{"host": "federation.apps.example.org"}, nil), "https://federation.apps.example.org"},
		"host assigned by the router": {route(map[string]any{}, map[string]any{"ingress": []any{
			map[string]any{"routerName": "default"}, map[string]any{"host": "spire-server-federation-ns.apps.example.org"},
		}}), "https://spire-server-federation-ns.apps.example.org"},
		"not admitted yet": {route(map[string]any{}, nil), ""},
	}
	for name, tc := range cases {
		if got := routeURL(tc.route); got != tc.want {
			t.Errorf("%s: routeURL = %q, want %q", name, got, tc.want)
		}
	}
}

func TestEndpointSPIFFEID(t *testing.T) {
	if got := EndpointSPIFFEID("east.example.org"); got != "spiffe://east.example.org/spire/server" {
		t.Errorf("EndpointSPIFFEID = %q", got)
	}
	if got := EndpointSPIFFEID("East.Example.org"); got != "" {
		t.Errorf("EndpointSPIFFEID of an invalid trust domain = %q, want empty", got)
	}
}

func TestFactsPrecedence(t *testing.T) {
	older := object(map[string]any{"trustDomain": "old.example.org", "clusterName": "old", "bundleConfigMap": "old-bundle"})
	newer := object(map[string]any{"trustDomain": "new.example.org", "clusterName": "new"})

	f := Facts{ZTWIM: newer, SpireServer: older}
	if td, kind := f.TrustDomain(); td != "new.example.org" || kind != kube.ZeroTrustWorkloadIdentityManager {
		t.Errorf("TrustDomain with both = %q from %s, want the ZeroTrustWorkloadIdentityManager's", td, kind.Kind)
	}
	if got := f.ClusterName(); got != "new" {
		t.Errorf("ClusterName = %q, want new", got)
	}
	// The ZeroTrustWorkloadIdentityManager says nothing about the ConfigMap
	// (no API server applied its default here), so the SpireServer's counts.
	if got := f.BundleConfigMap(); got != "old-bundle" {
		t.Errorf("BundleConfigMap = %q, want old-bundle", got)
	}

	f = Facts{SpireServer: older}
	if td, kind := f.TrustDomain(); td != "old.example.org" || kind != kube.SpireServer {
		t.Errorf("TrustDomain of an older operator = %q from %s", td, kind.Kind)
	}
	if f.FederationProfile() != "" || f.Federation() != nil {
		t.Errorf("FederationProfile without federation = %q, want empty", f.FederationProfile())
	}

	f = Facts{SpireServer: object(map[string]any{"federation": map[string]any{"bundleEndpoint": map[string]any{}}})}
	if td, _ := f.TrustDomain(); td != "" || !f.Found() {
		t.Errorf("TrustDomain = %q, Found = %v; want empty and true", td, f.Found())
	}
	if got := f.BundleConfigMap(); got != DefaultBundleConfigMap {
		t.Errorf("BundleConfigMap default = %q", got)
	}
	if got := f.FederationProfile(); got != "https_spiffe" {
		t.Errorf("FederationProfile default = %q, want https_spiffe", got)
	}
	if (&Facts{}).Found() {
		t.Error("Found() on empty facts")
	}
}

// TestManagedRouteAndOperatorRoute: managedRoute is the CRD's string with
// default "true", compared with "true" as the operator does; a Route is the
// operator's when it carries its managed-by label.
func TestManagedRouteAndOperatorRoute(t *testing.T) {
	fed := func(v any) *Facts {
		f := map[string]any{"bundleEndpoint": map[string]any{}}
		if v != nil {
			f["managedRoute"] = v
		}
		return &Facts{SpireServer: object(map[string]any{"federation": f})}
	}
	for name, tc := range map[string]struct {
		facts *Facts
		want  bool
	}{
		"unset (CRD default)": {fed(nil), true},
		"true":                {fed("true"), true},
		"false":               {fed("false"), false},
		"no federation":       {&Facts{SpireServer: object(map[string]any{})}, false},
	} {
		if got := tc.facts.ManagedRoute(); got != tc.want {
			t.Errorf("%s: ManagedRoute = %v, want %v", name, got, tc.want)
		}
	}
	route := &unstructured.Unstructured{Object: map[string]any{}}
	if IsOperatorRoute(route) {
		t.Error("a Route without labels counts as the operator's")
	}
	route.SetLabels(map[string]string{OperatorManagedByLabel: OperatorManagedByValue})
	if !IsOperatorRoute(route) {
		t.Error("a Route with the operator's managed-by label does not count as the operator's")
	}
	if RouteURL(nil) != "" {
		t.Error("RouteURL(nil) is not empty")
	}
}
