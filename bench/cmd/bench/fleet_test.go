package main

import (
	"strings"
	"testing"
	"time"
)

// A plan of the forced rotation of f02 in a mesh where f01 and f03 kept its
// old bundle, as terraform plan prints it (trimmed).
const rotationPlan = `
  # zerotrust_federated_trust_domain.peer["f01->f02"] will be updated in-place
  ~ resource "zerotrust_federated_trust_domain" "peer" {
      ~ spire_trust = "bundle_stale" -> "federated"
    }
  # zerotrust_federated_trust_domain.peer["f03->f02"] will be updated in-place
  ~ resource "zerotrust_federated_trust_domain" "peer" {
      ~ spire_trust = "bundle_stale" -> "federated"
    }
  # data.zerotrust_federation_status.mesh will be read during apply
Plan: 0 to add, 2 to change, 0 to destroy.
`

func TestFleetRotationPlan(t *testing.T) {
	want := []string{`zerotrust_federated_trust_domain.peer["f01->f02"]`, `zerotrust_federated_trust_domain.peer["f03->f02"]`}
	var r FleetRotate
	if others := r.judgePlan(rotationPlan, 2, want); !r.Exact || len(others) != 0 {
		t.Fatalf("the plan of exactly the repairs is not exact: %+v, others %v", r, others)
	}
	if r.PlanSummary != "Plan: 0 to add, 2 to change, 0 to destroy" || strings.Join(r.PlanTrust, ",") != "bundle_stale -> federated ×2" {
		t.Errorf("summary %q, spire_trust %v", r.PlanSummary, r.PlanTrust)
	}
	// One stale peer fewer than the plan repairs: not exact.
	if r.judgePlan(rotationPlan, 2, want[:1]); r.Exact {
		t.Errorf("a repair of a peer that was not stale counts as exact")
	}
	// Anything else planned: not exact, and named.
	extra := rotationPlan + "  # zerotrust_cluster_spiffe_id.workloads[\"f01\"] will be updated in-place\n"
	if others := r.judgePlan(extra, 2, want); r.Exact || len(others) != 1 {
		t.Errorf("a plan with another change counts as exact (others %v)", others)
	}
	// A repair from another state than bundle_stale: not exact.
	missing := strings.Replace(rotationPlan, `"bundle_stale" -> "federated"`, `"bundle_missing" -> "federated"`, 1)
	if r.judgePlan(missing, 2, want); r.Exact {
		t.Errorf("a bundle_missing repair counts as exact")
	}
	if r.judgePlan("No changes.", 0, nil); r.Exact {
		t.Errorf("an empty plan counts as exact")
	}
}

func TestPairSpread(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 20; i++ {
		ds = append(ds, time.Duration(i)*time.Second)
	}
	if s := pairSpread(ds); s.Median != 10.5 || s.P90 != 18 || s.Max != 20 {
		t.Errorf("1..20 s: %+v, want median 10.5, p90 18, max 20", s)
	}
	if s := pairSpread([]time.Duration{3 * time.Second}); s.Median != 3 || s.P90 != 3 || s.Max != 3 {
		t.Errorf("one pair: %+v", s)
	}
	if s := pairSpread(nil); s != (FleetSpread{}) {
		t.Errorf("no pairs: %+v", s)
	}
}
