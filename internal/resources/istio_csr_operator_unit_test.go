package resources

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/quantitytype"
)

func TestIstiodCertificateSpec(t *testing.T) {
	cfg := map[string]any{
		"istiodTLSConfig": map[string]any{"certificateDuration": "1h0m0s", "certificateRenewBefore": "30m0s", "certificateDNSNames": []any{"a.example.com"}},
		"istio":           map[string]any{"namespace": "istio-system", "revisions": []any{"default", "canary", ""}},
	}
	got := istiodCertificateSpec(cfg, "istio-system")
	want := map[string]any{
		"duration": "1h0m0s", "renewBefore": "30m0s", "commonName": "istiod.istio-system.svc",
		"dnsNames": []any{"a.example.com", "istiod.istio-system.svc", "istiod-canary.istio-system.svc"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("istiodCertificateSpec = %#v, want %#v", got, want)
	}
	cfg["istiodTLSConfig"].(map[string]any)["commonName"] = "istiod.example.com" //nolint:forcetypeassert // built above
	if cn := istiodCertificateSpec(cfg, "istio-system")["commonName"]; cn != "istiod.example.com" {
		t.Errorf("common name %v, want the configured one", cn)
	}
}

func TestCACertificateProblem(t *testing.T) {
	for text, want := range map[string]string{
		"":        "empty",
		"not pem": "not PEM",
		"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n": "not a CERTIFICATE",
		"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n": "does not parse",
	} {
		if got := caCertificateProblem(text); !strings.Contains(got, want) {
			t.Errorf("caCertificateProblem(%q) = %q, want it to say %q", text, got, want)
		}
	}
}

func conflictError(fields ...string) error {
	causes := make([]metav1.StatusCause, len(fields))
	for i, f := range fields {
		causes[i] = metav1.StatusCause{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "cmo" using operator.openshift.io/v1alpha1`, Field: f}
	}
	return apierrors.NewApplyConflict(causes, "Apply failed with conflicts")
}

func TestIstioCSRConflictForced(t *testing.T) {
	if !istioCSRConflictForced(conflictError(".spec.istioCSRConfig.istiodTLSConfig.certificateDuration", ".spec.istioCSRConfig.resources.requests.cpu")) {
		t.Error("conflicts on re-serialised fields only: want forced")
	}
	if istioCSRConflictForced(conflictError(".spec.istioCSRConfig.istiodTLSConfig.certificateDuration", ".spec.istioCSRConfig.logLevel")) {
		t.Error("a conflict on logLevel too: want not forced")
	}
	if istioCSRConflictForced(apierrors.NewNotFound(schema.GroupResource{}, "x")) {
		t.Error("not a conflict: want not forced")
	}
}

func TestKeepLiveSpelling(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"istioCSRConfig": map[string]any{
		"istiodTLSConfig": map[string]any{"certificateDuration": "1h", "maxCertificateDuration": "2h"},
		"resources":       map[string]any{"requests": map[string]any{"cpu": "0.5", "memory": "64Mi"}},
	}}}}
	live := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"istioCSRConfig": map[string]any{
		"istiodTLSConfig": map[string]any{"certificateDuration": "1h0m0s", "maxCertificateDuration": "1h0m0s"},
		"resources":       map[string]any{"requests": map[string]any{"cpu": "500m", "memory": "1Gi"}},
	}}}}
	keepLiveSpelling(obj, live)
	cfg := obj.Object["spec"].(map[string]any)["istioCSRConfig"].(map[string]any) //nolint:forcetypeassert // built above
	if got := cfg["istiodTLSConfig"]; !reflect.DeepEqual(got, map[string]any{"certificateDuration": "1h0m0s", "maxCertificateDuration": "2h"}) {
		t.Errorf("durations %v: want the live spelling of the same duration only", got)
	}
	if got := cfg["resources"]; !reflect.DeepEqual(got, map[string]any{"requests": map[string]any{"cpu": "500m", "memory": "64Mi"}}) {
		t.Errorf("quantities %v: want the live spelling of the same quantity only", got)
	}
}

// The quantities read from an object are of the quantity type, whose semantic
// equality lets the framework keep a prior spelling, and are written back as
// read.
func TestIstioCSRQuantitiesRead(t *testing.T) {
	ctx := context.Background()
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"istioCSRConfig": map[string]any{
		"resources": map[string]any{"requests": map[string]any{"cpu": "500m"}, "limits": map[string]any{"memory": "1Gi"}},
	}}}}
	obj.SetNamespace("istio-system")
	state, diags := istioCSRStateFromObject(ctx, types.StringNull(), obj)
	res, ok := objectAs[istioCSRResourcesModel](ctx, state.Resources, &diags)
	if diags.HasError() || !ok {
		t.Fatalf("resources %v not read: %v", state.Resources, diags)
	}
	if cpu, ok := res.Requests.Elements()["cpu"].(quantitytype.Value); !ok || cpu.ValueString() != "500m" {
		t.Errorf("requests.cpu = %#v, want the quantity 500m", res.Requests.Elements()["cpu"])
	}
	if got := stringMapOf(res.Limits); !reflect.DeepEqual(got, map[string]string{"memory": "1Gi"}) {
		t.Errorf("limits = %v, want memory 1Gi", got)
	}
	var d diag.Diagnostics
	if empty := istioCSRResourcesValue(ctx, state.Resources, map[string]any{}, &d); !empty.IsNull() || d.HasError() {
		t.Errorf("no resources: %v, %v; want null", empty, d)
	}
}

func TestReleaseIstioCSRResources(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"istioCSRConfig": map[string]any{
		"resources": map[string]any{"requests": map[string]any{"cpu": "10m"}, "limits": map[string]any{"memory": "1Gi"}},
	}}}}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"istioCSRConfig": map[string]any{}}}}
	releaseIstioCSRResources(obj, live)
	if got, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "istioCSRConfig", "resources"); !reflect.DeepEqual(got, map[string]any{"claims": []any{}}) {
		t.Errorf("resources = %#v, want an empty part the object does not hold", got)
	}
	empty := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"istioCSRConfig": map[string]any{"resources": map[string]any{}}}}}
	obj = &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"istioCSRConfig": map[string]any{}}}}
	releaseIstioCSRResources(obj, empty)
	if _, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "istioCSRConfig", "resources"); found {
		t.Error("nothing to release: want resources left out")
	}
}
