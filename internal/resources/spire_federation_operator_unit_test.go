package resources

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
)

// federationPlanModel is a planned zerotrust_spire_federation with the given
// managed_route and https_web (nil: the https_spiffe default).
func federationPlanModel(t *testing.T, managedRoute types.Bool, acme, servingCert map[string]attr.Value) spireFederationResourceModel {
	t.Helper()
	ty := federationTypes()
	web := types.ObjectNull(ty.httpsWeb)
	profile := "https_spiffe"
	if acme != nil || servingCert != nil {
		profile = "https_web"
		a, c := types.ObjectNull(ty.acme), types.ObjectNull(ty.servingCert)
		if acme != nil {
			a = types.ObjectValueMust(ty.acme, acme)
		}
		if servingCert != nil {
			c = types.ObjectValueMust(ty.servingCert, servingCert)
		}
		web = types.ObjectValueMust(ty.httpsWeb, map[string]attr.Value{"acme": a, "serving_cert": c})
	}
	return spireFederationResourceModel{
		ManagedRoute: managedRoute,
		BundleEndpoint: types.ObjectValueMust(ty.bundleEndpoint, map[string]attr.Value{
			"profile": types.StringValue(profile), "refresh_hint": types.Int64Value(300), "https_web": web,
		}),
	}
}

func acmeValues(domain string) map[string]attr.Value {
	return map[string]attr.Value{
		"directory_url": types.StringValue("https://acme.example.test/dir"), "domain_name": types.StringValue(domain),
		"email": types.StringValue("admin@example.test"), "tos_accepted": types.BoolValue(true),
	}
}

// TestFederationChoiceWarnings: the plan warns about managed_route = false,
// serving_cert without external_secret_ref and an ACME domain name other
// than the Route's host (only when the trust domain is known),
// naming the attribute and the operator's function; the sound choices plan
// without a warning.
func TestFederationChoiceWarnings(t *testing.T) {
	ctx := context.Background()
	cert := func(ref types.String) map[string]attr.Value {
		return map[string]attr.Value{"file_sync_interval": types.Int64Value(86400), "external_secret_ref": ref}
	}
	cases := map[string]struct {
		plan        spireFederationResourceModel
		trustDomain string
		want        []string // summary, attribute path, operator function; none: no warning
	}{
		"managed_route false": {federationPlanModel(t, types.BoolValue(false), nil, nil), "east.test",
			[]string{"SpireServer Will Not Become Ready", "managed_route", "routes.go reconcileRoute", "SetReadyCondition", "Federation managed route"}},
		"managed_route true":    {federationPlanModel(t, types.BoolValue(true), nil, nil), "east.test", nil},
		"managed_route unknown": {federationPlanModel(t, types.BoolUnknown(), nil, nil), "east.test", nil},
		"serving_cert without external_secret_ref": {federationPlanModel(t, types.BoolValue(true), nil, cert(types.StringNull())), "east.test",
			[]string{"https_web Peers Will See the Router's Certificate", "bundle_endpoint.https_web.serving_cert.external_secret_ref",
				"spire-server-serving-cert", "router's default certificate"}},
		"serving_cert with external_secret_ref": {federationPlanModel(t, types.BoolValue(true), nil, cert(types.StringValue("tls"))), "east.test", nil},
		"acme domain other than the Route's host": {federationPlanModel(t, types.BoolValue(true), acmeValues("bundles.east.test"), nil), "east.test",
			[]string{"ACME Domain Name Not the Route's Host", "bundle_endpoint.https_web.acme.domain_name", `"federation.east.test"`,
				"generateFederationRoute"}},
		"acme domain the Route's host":    {federationPlanModel(t, types.BoolValue(true), acmeValues("federation.east.test"), nil), "east.test", nil},
		"acme with trust domain unknown":  {federationPlanModel(t, types.BoolValue(true), acmeValues("bundles.east.test"), nil), "", nil},
		"managed_route false, acme other": {federationPlanModel(t, types.BoolValue(false), acmeValues("bundles.east.test"), nil), "east.test", []string{"SpireServer Will Not Become Ready"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			diags := federationChoiceWarnings(ctx, tc.plan, tc.trustDomain)
			if diags.HasError() {
				t.Fatalf("errors: %v", diags)
			}
			if len(tc.want) == 0 {
				if diags.WarningsCount() != 0 {
					t.Fatalf("want no warning, got %v", diags)
				}
				return
			}
			if diags.WarningsCount() != 1 {
				t.Fatalf("want one warning, got %v", diags)
			}
			w := diags.Warnings()[0]
			if w.Summary() != tc.want[0] {
				t.Errorf("summary %q, want %q", w.Summary(), tc.want[0])
			}
			for _, s := range tc.want[1:] {
				if !strings.Contains(w.Detail(), s) {
					t.Errorf("detail %q lacks %q", w.Detail(), s)
				}
			}
			if _, ok := w.(diag.DiagnosticWithPath); !ok {
				t.Errorf("warning %q names no attribute", w.Summary())
			}
		})
	}
}

// spireServerWith is a SpireServer at generation gen and resourceVersion rv
// with the given conditions (type, status, reason, message, lastTransitionTime).
func spireServerWith(gen int64, rv string, conds ...[5]string) *unstructured.Unstructured {
	items := make([]any, 0, len(conds))
	for _, c := range conds {
		items = append(items, map[string]any{"type": c[0], "status": c[1], "reason": c[2], "message": c[3], "lastTransitionTime": c[4]})
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"conditions": items}}}
	obj.SetGeneration(gen)
	obj.SetResourceVersion(rv)
	return obj
}

// TestFederationWaiter follows the operator's status writes as
// pkg/controller/spire-server writes them (no observedGeneration;
// lastTransitionTime moving only on flips; Ready=False/Progressing first on
// every reconcile) and checks the verdict the wait takes from each read.
func TestFederationWaiter(t *testing.T) {
	start := time.Date(2026, 11, 26, 9, 0, 0, 500_000_000, time.UTC)
	old, now := "2026-11-26T08:00:00Z", "2026-11-26T09:00:00Z"
	ready := func(ltt string) [5]string {
		return [5]string{"Ready", "True", "Ready", "All components are ready", ltt}
	}
	valid := func(ltt string) [5]string {
		return [5]string{"ConfigurationValid", "True", "ConfigurationValid", "All configuration fields are valid", ltt}
	}
	reconciling := func(ltt string) [5]string {
		return [5]string{"Ready", "False", "Progressing", "Reconciling SpireServer", ltt}
	}
	refused := func(ltt string) [5]string {
		return [5]string{"ConfigurationValid", "False", "InvalidFederationConfiguration",
			"Federation configuration validation failed: federatesWith[0]: cannot federate with own trust domain east.test", ltt}
	}
	refusedReady := func(ltt string) [5]string {
		return [5]string{"Ready", "False", "Failed", "ConfigurationValid: Federation configuration validation failed: ...", ltt}
	}
	routeOff := [5]string{"RouteAvailable", "False", "FederationRouteDisabled", "Federation managed route disabled", old}
	routeOffReady := func(ltt string) [5]string {
		return [5]string{"Ready", "False", "Failed", "RouteAvailable: Federation managed route disabled", ltt}
	}
	type read struct {
		obj  *unstructured.Unstructured
		at   time.Duration // after start
		want federationVerdictKind
		done bool
	}
	cases := map[string]struct {
		before, applied *unstructured.Unstructured
		reads           []read
	}{
		"generation unchanged: Ready=True at once": {
			before: spireServerWith(3, "10", ready(old)), applied: spireServerWith(3, "11", ready(old)),
			reads: []read{{spireServerWith(3, "11", ready(old)), time.Second, verdictReady, true}},
		},
		"generation unchanged, no operator: nothing to wait for": {
			before: spireServerWith(3, "10"), applied: spireServerWith(3, "11"),
			reads: []read{{spireServerWith(3, "11"), time.Second, verdictPending, true}},
		},
		"the old Ready=True is not the verdict; the flip is": {
			before: spireServerWith(3, "10", ready(old), valid(old)), applied: spireServerWith(4, "11", ready(old), valid(old)),
			reads: []read{
				{spireServerWith(4, "11", ready(old), valid(old)), time.Second, verdictPending, false},
				{spireServerWith(4, "12", reconciling(now), valid(old)), 2 * time.Second, verdictPending, false},
				{spireServerWith(4, "13", ready(now), valid(old)), 3 * time.Second, verdictReady, true},
			},
		},
		"the transient Progressing missed: Ready=True's new lastTransitionTime": {
			before: spireServerWith(3, "10", ready(old)), applied: spireServerWith(4, "11", ready(old)),
			reads: []read{{spireServerWith(4, "13", ready(now)), time.Second, verdictReady, true}},
		},
		"a refusal after the apply ends the wait": {
			before: spireServerWith(3, "10", ready(old), valid(old)), applied: spireServerWith(4, "11", ready(old), valid(old)),
			reads: []read{{spireServerWith(4, "13", refusedReady(now), refused(now)), time.Second, verdictRefused, true}},
		},
		"a refusal written in the apply's second, before it, is not this change's verdict": {
			before: spireServerWith(3, "10", refusedReady(now), refused(now)), applied: spireServerWith(4, "11", refusedReady(now), refused(now)),
			reads: []read{
				{spireServerWith(4, "11", refusedReady(now), refused(now)), time.Second, verdictPending, false},
				{spireServerWith(4, "12", reconciling(now), refused(now)), 2 * time.Second, verdictPending, false},
				{spireServerWith(4, "13", ready(now), valid(now)), 3 * time.Second, verdictReady, true},
			},
		},
		"a refusal of the last change is not this change's verdict": {
			before: spireServerWith(3, "10", refusedReady(old), refused(old)), applied: spireServerWith(4, "11", refusedReady(old), refused(old)),
			reads: []read{
				{spireServerWith(4, "12", reconciling(old), refused(old)), time.Second, verdictPending, false},
				{spireServerWith(4, "13", ready(now), valid(now)), 2 * time.Second, verdictReady, true},
			},
		},
		"the same refusal again: the operator's write is the sign": {
			before: spireServerWith(3, "10", refusedReady(old), refused(old)), applied: spireServerWith(4, "11", refusedReady(old), refused(old)),
			reads: []read{
				{spireServerWith(4, "11", refusedReady(old), refused(old)), time.Second, verdictPending, false},
				{spireServerWith(4, "13", refusedReady(old), refused(old)), 2 * time.Second, verdictRefused, true},
			},
		},
		"managed_route false stays Ready=False: done once the operator wrote": {
			before: spireServerWith(3, "10", routeOffReady(old), routeOff), applied: spireServerWith(4, "11", routeOffReady(old), routeOff),
			reads: []read{
				{spireServerWith(4, "11", routeOffReady(old), routeOff), time.Second, verdictPending, false},
				{spireServerWith(4, "14", routeOffReady(old), routeOff), 2 * time.Second, verdictRouteDisabled, true},
			},
		},
		"nothing moves: after the settle window the conditions stand": {
			before: spireServerWith(3, "10", routeOffReady(old), routeOff), applied: spireServerWith(4, "11", routeOffReady(old), routeOff),
			reads: []read{
				{spireServerWith(4, "11", routeOffReady(old), routeOff), 5 * time.Second, verdictPending, false},
				{spireServerWith(4, "11", routeOffReady(old), routeOff), federationSettleWindow + time.Second, verdictRouteDisabled, true},
			},
		},
		"a transient failure on the first reconcile is waited out (A2)": {
			before: spireServerWith(1, "10"), applied: spireServerWith(2, "11"),
			reads: []read{
				{spireServerWith(2, "12", [5]string{"Ready", "False", "Failed", "StatefulSetAvailable: Failed to get StatefulSet", now},
					[5]string{"StatefulSetAvailable", "False", "StatefulSetNotFound", "Failed to get StatefulSet", now}), time.Second, verdictPending, false},
				{spireServerWith(2, "13", ready(now)), 2 * time.Second, verdictReady, true},
			},
		},
		"no operator: never a verdict": {
			before: spireServerWith(1, "10"), applied: spireServerWith(2, "11"),
			reads: []read{{spireServerWith(2, "11"), federationSettleWindow + time.Minute, verdictPending, false}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newFederationWaiter(tc.before, start)
			w.applied(tc.applied)
			for i, r := range tc.reads {
				v, done := w.observe(r.obj, start.Add(r.at))
				if v.kind != r.want || done != r.done {
					t.Fatalf("read %d: verdict %d done %v, want %d done %v", i, v.kind, done, r.want, r.done)
				}
			}
		})
	}
}

// TestPeersWithoutBundle: only planned peers that were applied before and
// whose bundle SPIRE does not hold are reported, in the plan's order.
func TestPeersWithoutBundle(t *testing.T) {
	view := spireexec.View{Bundles: map[string]*spiffebundle.Bundle{
		"held.test": spiffebundle.New(spiffeid.RequireTrustDomainFromString("held.test")),
	}}
	applied := map[string]bool{"held.test": true, "lost.test": true, "gone.test": true}
	got := peersWithoutBundle([]string{"held.test", "lost.test", "new.test"}, applied, view)
	if strings.Join(got, ",") != "lost.test" {
		t.Fatalf("peersWithoutBundle = %v, want [lost.test]: held.test is held, new.test not applied yet, gone.test no longer planned", got)
	}
	if got := peersWithoutBundle([]string{"lost.test"}, applied, spireexec.View{}); len(got) != 1 {
		t.Fatalf("with no bundle held at all: %v, want [lost.test]", got)
	}
}
