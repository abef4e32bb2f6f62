package leastprivilege_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/harness"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/rbac"
)

// dirs are the working directories the lifecycles left, with their objects
// in place.
type dirs struct {
	spire, mesh, csr, domain string
}

func key(role, groupResource, verb string) string { return role + " " + groupResource + " " + verb }

// ftdProbeConfig is a ClusterFederatedTrustDomain without SPIRE features,
// for the rules of its kind alone.
func ftdProbeConfig(name, url string) string {
	return fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "probe" {
  name                = %[1]q
  trust_domain        = "%[1]s.zt.test"
  bundle_endpoint_url = %[2]q
  bundle_endpoint_profile = {
    type = "https_web"
  }
}
`, name, url)
}

func dvProbeConfig(domain string) string {
	return fmt.Sprintf(`
resource "zerotrust_domain_verification" "probe" {
  domain = %q
}
`, domain)
}

// listConfig is one list block of typ.
func listConfig(typ string) string {
	return fmt.Sprintf(`
list %q "all" {
  provider = zerotrust
}
`, typ)
}

// exercises returns one exercise per rule of the table.
func (e *env) exercises(t *testing.T, d dirs) []exercise {
	plan := func(dir string) func(*testing.T, *session) {
		return func(t *testing.T, s *session) { s.tf(t, dir, "plan") }
	}
	// apply plans config in dir and, when the plan succeeds, applies that
	// plan (two commands, so the audit log tells them apart); dir's
	// configuration is put back afterwards.
	apply := func(dir, config string) func(*testing.T, *session) {
		return func(t *testing.T, s *session) {
			old, err := os.ReadFile(filepath.Join(dir, "main.tf"))
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := os.WriteFile(filepath.Join(dir, "main.tf"), old, 0o600); err != nil {
					t.Fatal(err)
				}
			}()
			e.write(t, dir, "main.tf", config)
			if _, code := s.tf(t, dir, "plan", "-out=tfplan"); code == 0 {
				s.tf(t, dir, "apply", "tfplan")
			}
		}
	}
	destroy := func(dir string) func(*testing.T, *session) {
		return func(t *testing.T, s *session) { s.tf(t, dir, "destroy", "-auto-approve") }
	}
	query := func(typ string) func(*testing.T, *session) {
		return func(t *testing.T, s *session) {
			dir := e.workdir(t, "")
			e.write(t, dir, "list.tfquery.hcl", listConfig(typ))
			s.tf(t, dir, "query")
		}
	}

	// Objects for the rules of one kind alone, created with every rule.
	probe := e.workdir(t, ftdProbeConfig("probe", "https://bundles.probe.zt.test"))
	e.mustTF(t, probe, "apply", "-auto-approve")
	fresh := e.workdir(t, ftdProbeConfig("fresh", "https://bundles.fresh.zt.test"))
	dvProbe := e.workdir(t, dvProbeConfig("probe."+dvDomain))
	e.mustTF(t, dvProbe, "apply", "-auto-approve")
	dvFresh := e.workdir(t, dvProbeConfig("fresh."+dvDomain))
	t.Cleanup(func() {
		for _, dir := range []string{probe, dvProbe} {
			e.tf(t, dir, "destroy", "-auto-approve")
		}
	})

	const (
		ftd   = "clusterfederatedtrustdomains.spire.spiffe.io"
		ss    = "spireservers.operator.openshift.io"
		dv    = "domainverifications.kuadrant.dev"
		spNS  = harness.DefaultSpireNamespace
		cftdP = `ClusterFederatedTrustDomain "probe"`
	)
	return []exercise{
		{rule: key(rbac.Cluster, ftd, "get"), object: cftdP, run: plan(probe)},
		{rule: key(rbac.Cluster, ftd, "list"), object: "ClusterFederatedTrustDomain objects", run: apply(fresh, ftdProbeConfig("fresh", "https://bundles.fresh.zt.test"))},
		{rule: key(rbac.Cluster, ftd, "create"), object: `ClusterFederatedTrustDomain "fresh"`, run: apply(fresh, ftdProbeConfig("fresh", "https://bundles.fresh.zt.test"))},
		{rule: key(rbac.Cluster, ftd, "patch"), object: cftdP, run: apply(probe, ftdProbeConfig("probe", "https://bundles2.probe.zt.test"))},
		{rule: key(rbac.Cluster, ftd, "delete"), object: cftdP, run: destroy(probe)},
		{rule: key(rbac.Cluster, ss, "get"), object: `SpireServer "cluster"`, run: plan(d.spire)},
		{rule: key(rbac.Cluster, ss, "list"), object: "SpireServer objects", run: query("zerotrust_spire_federation")},
		{rule: key(rbac.Cluster, ss, "patch"), object: `SpireServer "cluster"`, run: apply(d.spire, e.spireConfig(spireExtraPeer+spireExtraPeer2))},
		{rule: key(rbac.Cluster, "zerotrustworkloadidentitymanagers.operator.openshift.io", "get"), object: `ZeroTrustWorkloadIdentityManager "cluster"`, run: plan(d.spire)},
		{rule: key(rbac.Spire, "pods", "get"), ns: spNS, object: `Pod "` + spNS + `/spire-server-0"`, run: plan(d.spire)},
		{rule: key(rbac.Spire, "pods/exec", "get"), ns: spNS, object: `Pod "` + spNS + `/spire-server-0"`, run: plan(d.spire)},
		{rule: key(rbac.Spire, "pods/exec", "create"), ns: spNS, object: `Pod "` + spNS + `/spire-server-0"`, run: plan(d.spire)},
		{rule: key(rbac.Spire, "configmaps", "get"), ns: spNS, object: `ConfigMap "` + spNS + `/spire-bundle"`, run: plan(d.spire)},
		{rule: key(rbac.Spire, "routes.route.openshift.io", "get"), ns: spNS, object: `Route "` + spNS + `/spire-server-federation"`, run: plan(d.spire)},
		{rule: key(rbac.Cluster, dv, "get"), object: `DomainVerification "` + dvDomain + `"`, run: plan(d.domain)},
		{rule: key(rbac.Cluster, dv, "list"), object: "DomainVerification objects", run: query("zerotrust_domain_verification")},
		{rule: key(rbac.Cluster, dv, "create"), object: `DomainVerification "fresh.` + dvDomain + `"`, run: apply(dvFresh, dvProbeConfig("fresh."+dvDomain))},
		{rule: key(rbac.Cluster, dv, "patch"), object: `DomainVerification "fresh.` + dvDomain + `"`, run: apply(dvFresh, dvProbeConfig("fresh."+dvDomain))},
		{rule: key(rbac.Cluster, dv, "delete"), object: `DomainVerification "probe.` + dvDomain + `"`, run: destroy(dvProbe)},
	}
}

const spireExtraPeer2 = `
    "extra2.zt.test" = {
      bundle_endpoint_url     = "https://bundles.extra2.zt.test"
      bundle_endpoint_profile = "https_web"
    }
`
