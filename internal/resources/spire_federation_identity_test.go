package resources_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// brownfieldFederationSpec is spec.federation set up before Terraform: the
// required bundleEndpoint and one https_spiffe peer.
func brownfieldFederationSpec(peerTD string) map[string]any {
	return map[string]any{"federation": map[string]any{
		"bundleEndpoint": map[string]any{},
		"federatesWith":  []any{peer(peerTD, "https://spire."+peerTD, "https_spiffe", "spiffe://"+peerTD+"/spire/server")},
	}}
}

// brownfieldFederationHCL is what adopting brownfieldFederationSpec takes.
func brownfieldFederationHCL(peerTD string) string {
	return fmt.Sprintf(`
  federates_with = {
    %q = {
      bundle_endpoint_url     = "https://spire.%s"
      bundle_endpoint_profile = "https_spiffe"
      endpoint_spiffe_id      = "spiffe://%s/spire/server"
    }
  }`, peerTD, peerTD, peerTD)
}

// TestAccSpireFederation_identityImport adopts the federation by resource
// identity (Terraform >= 1.12): the identity Terraform stored, and one
// written by hand without `cluster` (the provider's default connection).
// Both plan no change.
func TestAccSpireFederation_identityImport(t *testing.T) {
	acctest.ExclusiveTest(t, func(c *harness.Cluster) resource.TestCase {
		acctest.ResetSpireSingletons(t, c)
		acctest.ZTWIMStandIn(t, c)
		td := acctest.UniqueName("ident") + ".test"
		acctest.ApplyAs(t, c, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject(td, c.Name))
		acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(brownfieldFederationSpec("west.test")))
		hcl := brownfieldFederationHCL("west.test")
		config := federationConfig(t, c, hcl)
		const defaultAddr = "zerotrust_spire_federation.default"
		byHand := config + fmt.Sprintf(`
resource "zerotrust_spire_federation" "default" {
%s
}

import {
  to       = %s
  identity = { name = "cluster" }
}
`, hcl, defaultAddr)
		return resource.TestCase{
			TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			Steps: []resource.TestStep{
				{
					Config: config,
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectIdentity(federationAddr, map[string]knownvalue.Check{
							"cluster": knownvalue.StringExact(c.Name), "name": knownvalue.StringExact("cluster"),
						}),
					},
				},
				{
					ResourceName:    federationAddr,
					ImportState:     true,
					ImportStateKind: resource.ImportBlockWithResourceIdentity,
					ImportPlanChecks: resource.ImportPlanChecks{
						PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction(federationAddr, plancheck.ResourceActionNoop),
							plancheck.ExpectKnownValue(federationAddr, tfjsonpath.New("trust_domain"), knownvalue.StringExact(td)),
						},
					},
				},
				{
					Config: byHand,
					ConfigPlanChecks: resource.ConfigPlanChecks{
						PreApply: []plancheck.PlanCheck{
							plancheck.ExpectResourceAction(defaultAddr, plancheck.ResourceActionNoop),
							plancheck.ExpectKnownValue(defaultAddr, tfjsonpath.New("id"), knownvalue.StringExact("cluster")),
						},
						PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					},
					ConfigStateChecks: []statecheck.StateCheck{
						statecheck.ExpectIdentity(defaultAddr, map[string]knownvalue.Check{
							"cluster": knownvalue.Null(), "name": knownvalue.StringExact("cluster"),
						}),
					},
				},
			},
		}
	})
}

// federationListProvider is a provider block with only a `clusters` map
// (no default connection, which would list a cluster twice).
func federationListProvider(clusters ...*harness.Cluster) string {
	var b strings.Builder
	b.WriteString("provider \"zerotrust\" {\n  clusters = {\n")
	for _, c := range clusters {
		fmt.Fprintf(&b, "    %s = { config_path = %q, config_context = %q }\n", c.Name, c.Kubeconfig, c.Name)
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// TestAccSpireFederation_list lists the federation of two clusters (and of
// one without the operator's CRDs, which has nothing to list), filters by
// trust domain, adopts what `terraform query -generate-config-out` wrote
// with no change planned, and skips a SpireServer without spec.federation.
func TestAccSpireFederation_list(t *testing.T) {
	t.Parallel()
	a := acctest.Exclusive(t)
	b := acctest.OwnCluster(t, "fedlist")
	bare := acctest.Cluster(t, acctest.Bare)
	tdA, tdB := acctest.UniqueName("lista")+".test", acctest.UniqueName("listb")+".test"
	for _, s := range []struct {
		c      *harness.Cluster
		td     string
		peerTD string
	}{{a, tdA, "west.test"}, {b, tdB, "north.test"}} {
		acctest.ResetSpireSingletons(t, s.c)
		acctest.ApplyAs(t, s.c, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject(s.td, s.c.Name))
		acctest.ApplyAs(t, s.c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(brownfieldFederationSpec(s.peerTD)))
	}
	provider := federationListProvider(a, b, bare)
	listAll := `
list "zerotrust_spire_federation" "all" {
  provider         = zerotrust
  include_resource = true
}
`
	lists := listAll + fmt.Sprintf(`
list "zerotrust_spire_federation" "b" {
  provider = zerotrust
  config {
    trust_domain = %q
  }
}
`, tdB)
	identity := func(c *harness.Cluster) map[string]knownvalue.Check {
		return map[string]knownvalue.Check{"cluster": knownvalue.StringExact(c.Name), "name": knownvalue.StringExact("cluster")}
	}
	const all, onlyB = "zerotrust_spire_federation.all", "zerotrust_spire_federation.b"

	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)},
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			// The provider configuration lives in the .tf file; the query
			// steps add list blocks in a .tfquery.hcl file.
			{Config: provider},
			{
				Query:  true,
				Config: lists,
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength(all, 2),
					querycheck.ExpectIdentity(all, identity(a)),
					querycheck.ExpectIdentity(all, identity(b)),
					querycheck.ExpectResourceDisplayName(all, queryfilter.ByResourceIdentity(identity(b)),
						knownvalue.StringExact(fmt.Sprintf("%s/cluster (trust domain %s)", b.Name, tdB))),
					querycheck.ExpectResourceKnownValues(all, queryfilter.ByResourceIdentity(identity(a)), []querycheck.KnownValueCheck{
						{Path: tfjsonpath.New("id"), KnownValue: knownvalue.StringExact(a.Name + "/cluster")},
						{Path: tfjsonpath.New("trust_domain"), KnownValue: knownvalue.StringExact(tdA)},
						{Path: tfjsonpath.New("federates_with").AtMapKey("west.test").AtMapKey("endpoint_spiffe_id"),
							KnownValue: knownvalue.StringExact("spiffe://west.test/spire/server")},
						{Path: tfjsonpath.New("force_conflicts"), KnownValue: knownvalue.Bool(false)},
					}),
					querycheck.ExpectLength(onlyB, 1),
					querycheck.ExpectIdentity(onlyB, identity(b)),
				},
			},
			{
				// The generated configuration adopts both with no change. Then
				// b's SpireServer loses spec.federation (the operator was
				// reinstalled): nothing there to adopt, so it is not listed.
				PreConfig: func() {
					acctest.QueryGenerateConfig(t, provider, listAll, 2)
					acctest.ResetSpireSingletons(t, b)
					acctest.ApplyAs(t, b, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager, acctest.ZTWIMObject(tdB, b.Name))
					acctest.ApplyAs(t, b, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(nil))
				},
				Query:  true,
				Config: lists,
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength(all, 1),
					querycheck.ExpectIdentity(all, identity(a)),
					querycheck.ExpectLength(onlyB, 0),
				},
			},
		},
	})
}

// TestAccSpireFederation_stateWithoutIdentity applies with Terraform 1.11,
// which stores no resource identity, then plans with the current CLI:
// nothing to change, and a refresh records the identity.
func TestAccSpireFederation_stateWithoutIdentity(t *testing.T) {
	t.Parallel()
	c := acctest.Exclusive(t)
	acctest.ResetSpireSingletons(t, c)
	acctest.ZTWIMStandIn(t, c)
	acctest.ApplyAs(t, c, kube.ZeroTrustWorkloadIdentityManager, acctest.OperatorManager,
		acctest.ZTWIMObject(acctest.UniqueName("noident")+".test", c.Name))
	acctest.ApplyAs(t, c, kube.SpireServer, acctest.OperatorManager, acctest.SpireServerObject(nil))
	acctest.StateWithoutIdentity(t, federationConfig(t, c, twoPeersHCL), map[string]any{"cluster": c.Name, "name": "cluster"}, nil)
}
