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
)

func istioCSRIdentity(cluster, ns string) map[string]knownvalue.Check {
	return wantIdentity(cluster, "namespace", ns, "name", "default")
}

// TestAccIstioCSR_identityImport: create and refresh store the identity
// (cluster, namespace, name), an import block with that identity adopts
// the object with nothing to change, and the configuration Terraform
// generates from it plans nothing either.
func TestAccIstioCSR_identityImport(t *testing.T) {
	istioCSRAlone(t)
	ns := acctest.UniqueNamespace(t, acctest.East, "csrid")
	issuer := istioCSRIssuer(t, ns, true)
	const addr = "zerotrust_istio_csr.this"
	config := istioCSRConfig(t, acctest.East, ns, minimalIstioCSRBody(issuer)+"\n  log_level = 2")
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
		Steps:                    identityImportSteps(config, identityImport{addr: addr, identity: istioCSRIdentity(acctest.East, ns), generate: true}),
	})

	// The default connection: the identity's cluster is null.
	t.Run("default connection", func(t *testing.T) {
		ns, untouched := brownfieldIstioCSR(t, nil)
		config := istioCSRConfig(t, "", ns, minimalIstioCSRBody(istioCSRIssuerName(ns)))
		resource.Test(t, resource.TestCase{
			TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
			ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
			CheckDestroy:             acctest.CheckIstioCSRGone(t, acctest.East, ns),
			Steps: []resource.TestStep{{
				Config: config + fmt.Sprintf("\nimport {\n  to = %s\n  identity = { namespace = %q, name = \"default\" }\n}\n", addr, ns),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentity(addr, istioCSRIdentity("", ns)),
					statecheck.ExpectKnownValue(addr, tfjsonpath.New("id"), knownvalue.StringExact(ns)),
				},
				Check: untouched,
			}},
		})
	})
}

// TestAccIstioCSR_list lists IstioCSRs another tool created, checks what
// the list returns, then runs `terraform query -generate-config-out`,
// applies the import blocks and configuration it wrote, and expects the
// next plan to be empty and the objects untouched.
func TestAccIstioCSR_list(t *testing.T) {
	istioCSRAlone(t)
	ns1, untouched1 := brownfieldIstioCSR(t, map[string]any{
		"logLevel": int64(3), "istio.revisions": []any{"default", "canary"},
		"tolerations": []any{map[string]any{"key": "infra", "operator": "Exists"}},
	})
	ns2, untouched2 := brownfieldIstioCSR(t, nil)
	query := fmt.Sprintf(`
list "zerotrust_istio_csr" "one" {
  provider         = zerotrust
  include_resource = true
  config {
    cluster   = %[3]q
    namespace = %[1]q
  }
}

list "zerotrust_istio_csr" "east" {
  provider = zerotrust
  config {
    cluster = %[3]q
  }
}

list "zerotrust_istio_csr" "every_cluster" {
  provider = zerotrust
  config {
    namespace = %[2]q
  }
}
`, ns1, ns2, acctest.East)
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)},
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			// A query runs against the configuration of the step before.
			{Config: acctest.ProviderConfig(t)},
			{
				Query:  true,
				Config: query,
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength("zerotrust_istio_csr.one", 1),
					querycheck.ExpectIdentity("zerotrust_istio_csr.one", istioCSRIdentity(acctest.East, ns1)),
					querycheck.ExpectResourceDisplayName("zerotrust_istio_csr.one",
						queryfilter.ByResourceIdentity(istioCSRIdentity(acctest.East, ns1)), knownvalue.StringExact("east/"+ns1)),
					querycheck.ExpectResourceKnownValues("zerotrust_istio_csr.one",
						queryfilter.ByResourceIdentity(istioCSRIdentity(acctest.East, ns1)), []querycheck.KnownValueCheck{
							{Path: tfjsonpath.New("id"), KnownValue: knownvalue.StringExact("east/" + ns1)},
							{Path: tfjsonpath.New("log_level"), KnownValue: knownvalue.Int64Exact(3)},
							{Path: tfjsonpath.New("istio").AtMapKey("revisions"), KnownValue: knownvalue.ListExact([]knownvalue.Check{
								knownvalue.StringExact("default"), knownvalue.StringExact("canary"),
							})},
							{Path: tfjsonpath.New("server"), KnownValue: knownvalue.Null()},
						}),
					// Every namespace of east: both objects (and those of
					// tests running alongside).
					querycheck.ExpectLengthAtLeast("zerotrust_istio_csr.east", 2),
					querycheck.ExpectIdentity("zerotrust_istio_csr.east", istioCSRIdentity(acctest.East, ns1)),
					querycheck.ExpectIdentity("zerotrust_istio_csr.east", istioCSRIdentity(acctest.East, ns2)),
					// No cluster: every cluster of the provider once (the default
					// connection reaches east, so it is not listed again); bare
					// serves no IstioCSR.
					querycheck.ExpectLength("zerotrust_istio_csr.every_cluster", 1),
					querycheck.ExpectIdentity("zerotrust_istio_csr.every_cluster", istioCSRIdentity(acctest.East, ns2)),
				},
			},
		},
	})

	var blocks strings.Builder
	for i, ns := range []string{ns1, ns2} {
		fmt.Fprintf(&blocks, `
list "zerotrust_istio_csr" "brownfield%d" {
  provider         = zerotrust
  include_resource = true
  config {
    cluster   = %q
    namespace = %q
  }
}
`, i, acctest.East, ns)
	}
	generated := acctest.QueryGenerateConfig(t, acctest.ProviderConfig(t), blocks.String(), 2)
	for _, ns := range []string{ns1, ns2} {
		if !strings.Contains(generated, ns) {
			t.Errorf("the generated configuration does not name %s:\n%s", ns, generated)
		}
	}
	for _, check := range []resource.TestCheckFunc{untouched1, untouched2} {
		if err := check(nil); err != nil {
			t.Error(err)
		}
	}
}
