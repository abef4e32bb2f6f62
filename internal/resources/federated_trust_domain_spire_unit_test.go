package resources

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

func TestAppliedWithin(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	obj := &unstructured.Unstructured{}
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "zerotrust", Operation: metav1.ManagedFieldsOperationApply, Time: &metav1.Time{Time: now.Add(-30 * time.Second)}},
		{Manager: "someone", Operation: metav1.ManagedFieldsOperationApply, Time: &metav1.Time{Time: now}},
	})
	if !appliedWithin(obj, "zerotrust", time.Minute, now) {
		t.Error("an apply 30 s ago is not within a minute")
	}
	if appliedWithin(obj, "zerotrust", 10*time.Second, now) {
		t.Error("an apply 30 s ago is within 10 s")
	}
	if appliedWithin(obj, "other", time.Hour, now) {
		t.Error("another manager's apply counted")
	}
	if appliedWithin(nil, "zerotrust", time.Hour, now) {
		t.Error("no object counted as applied")
	}
}

func spireTrustModel(t *testing.T, profile, trust string, bundle types.String) federatedTrustDomainResourceModel {
	t.Helper()
	attrs := map[string]attr.Value{"type": types.StringValue(profile), "endpoint_spiffe_id": types.StringNull()}
	if profile == "https_spiffe" {
		attrs["endpoint_spiffe_id"] = types.StringValue("spiffe://peer.test/spire/server")
	}
	p, d := types.ObjectValue(federatedTrustDomainObjectAttrTypes("bundle_endpoint_profile"), attrs)
	if d.HasError() {
		t.Fatal(d)
	}
	m := federatedTrustDomainResourceModel{
		Name: types.StringValue("peer-test"), TrustDomain: types.StringValue("peer.test"),
		BundleEndpointURL: types.StringValue("https://peer.test:8443"), BundleEndpointProfile: p,
		TrustDomainBundle: bundle, CheckSpire: types.BoolValue(true), SpireTrust: types.StringNull(),
		SpireServer: types.ObjectNull(federatedTrustDomainObjectAttrTypes("spire_server")),
	}
	if trust != "" {
		m.SpireTrust = types.StringValue(trust)
	}
	return m
}

// TestPlanSpireTrust pins what the plan makes of what the refresh found.
func TestPlanSpireTrust(t *testing.T) {
	ctx := context.Background()
	bundle := types.StringValue(`{"keys":[]}`)
	for _, tc := range []struct {
		name           string
		profile, found string
		creating, off  bool
		config         types.String
		want           types.String
		wantSummary    string
		wantError      bool
	}{
		{name: "create", profile: "https_spiffe", creating: true, want: types.StringUnknown()},
		{name: "check_spire off", profile: "https_spiffe", found: "bundle_missing", off: true, want: types.StringNull()},
		{name: "federated stays", profile: "https_spiffe", found: "federated", want: types.StringValue("federated")},
		{name: "not asked stays null", profile: "https_spiffe", want: types.StringNull()},
		{name: "lost bundle repaired", profile: "https_spiffe", found: "bundle_missing", config: bundle,
			want: types.StringValue("federated"), wantSummary: "SPIRE Federation Will Be Repaired"},
		{name: "lost bundle, none configured", profile: "https_spiffe", found: "bundle_missing", config: types.StringNull(),
			want: types.StringValue("federated"), wantSummary: "SPIRE Needs the Peer Bundle Again", wantError: true},
		{name: "stale bundle repaired", profile: "https_spiffe", found: "bundle_stale", config: bundle,
			want: types.StringValue("federated"), wantSummary: "SPIRE Federation Will Be Repaired"},
		{name: "revoked authority held needs no bundle", profile: "https_spiffe", found: "bundle_revoked", config: types.StringNull(),
			want: types.StringValue("federated"), wantSummary: "SPIRE Federation Will Be Repaired"},
		{name: "relationship missing needs no bundle", profile: "https_spiffe", found: "relationship_missing", config: types.StringNull(),
			want: types.StringValue("federated"), wantSummary: "SPIRE Federation Will Be Repaired"},
		{name: "https_web bundle is SPIRE's to fetch", profile: "https_web", found: "bundle_missing", config: types.StringNull(),
			want: types.StringValue("bundle_missing"), wantSummary: "SPIRE Holds No Peer Bundle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := tc.config
			plan := spireTrustModel(t, tc.profile, "", config)
			plan.SpireTrust = types.StringUnknown()
			plan.CheckSpire = types.BoolValue(!tc.off)
			cfg := spireTrustModel(t, tc.profile, "", config)
			var state *federatedTrustDomainResourceModel
			if !tc.creating {
				s := spireTrustModel(t, tc.profile, tc.found, bundle)
				state = &s
			}
			diags := planSpireTrust(ctx, nil, nil, &plan, cfg, state)
			if !plan.SpireTrust.Equal(tc.want) {
				t.Errorf("spire_trust planned %s, want %s", plan.SpireTrust, tc.want)
			}
			if diags.HasError() != tc.wantError {
				t.Errorf("error: %v, want %v (%v)", diags.HasError(), tc.wantError, diags)
			}
			switch {
			case tc.wantSummary == "" && len(diags) > 0:
				t.Errorf("diagnostics %v, want none", diags)
			case tc.wantSummary != "" && (len(diags) != 1 || diags[0].Summary() != tc.wantSummary):
				t.Errorf("diagnostics %v, want one %q", diags, tc.wantSummary)
			}
		})
	}
}

// TestJudgeEndpointLag pins which states of a rotation the plan repairs:
// only the forced one, where SPIRE holds an authority the peer revoked and
// lacks its successor; a scheduled rotation's states plan nothing.
func TestJudgeEndpointLag(t *testing.T) {
	now := time.Now()
	td := spiffeid.RequireTrustDomainFromString("peer.test")
	ca := func() *bundletest.CA { return bundletest.NewCA(t, td, now.Add(-time.Hour), now.Add(24*time.Hour)) }
	old, next, expired := ca(), ca(), bundletest.NewCA(t, td, now.Add(-48*time.Hour), now.Add(-time.Minute))
	bundle := func(hint time.Duration, cas ...*bundletest.CA) *spiffebundle.Bundle {
		b := spiffebundle.New(td)
		for _, c := range cas {
			b.AddX509Authority(c.Cert)
		}
		if hint > 0 {
			b.SetRefreshHint(hint)
		}
		return b
	}
	for _, tc := range []struct {
		name          string
		held, served  *spiffebundle.Bundle
		want          string
		missing, gone int
		poll          time.Duration
	}{
		{name: "same", held: bundle(5*time.Minute, old), served: bundle(0, old), want: "federated", poll: 75 * time.Second},
		{name: "endpoint silent", held: bundle(0, old), served: nil, want: "federated"},
		{name: "prepared, not fetched yet", held: bundle(5*time.Minute, old), served: bundle(0, old, next),
			want: "federated", missing: 1, poll: 75 * time.Second},
		{name: "old revoked after the peers fetched its successor", held: bundle(0, old, next), served: bundle(0, next),
			want: "federated", gone: 1},
		{name: "expired authority pruned", held: bundle(0, expired, old), served: bundle(0, old, next), want: "federated", missing: 1},
		{name: "forced rotation", held: bundle(30*time.Second, old), served: bundle(0, next),
			want: "bundle_revoked", missing: 1, gone: 1, poll: 15 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, lag := judgeEndpointLag(tc.held, tc.served, now)
			if got != tc.want || len(lag.Missing) != tc.missing || len(lag.Dropped) != tc.gone || lag.Poll != tc.poll {
				t.Errorf("judged %q with %d missing, %d dropped, poll %v; want %q, %d, %d, %v",
					got, len(lag.Missing), len(lag.Dropped), lag.Poll, tc.want, tc.missing, tc.gone, tc.poll)
			}
		})
	}
}
