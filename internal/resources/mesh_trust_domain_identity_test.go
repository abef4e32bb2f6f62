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
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

func meshIdentityChecks(cluster, kind, namespace, name string) map[string]knownvalue.Check {
	return map[string]knownvalue.Check{
		"cluster": knownvalue.StringExact(cluster), "kind": knownvalue.StringExact(kind),
		"namespace": knownvalue.StringExact(namespace), "name": knownvalue.StringExact(name),
	}
}

func kumaMeshTrustObject(ns, name, td, pem string) map[string]any {
	return map[string]any{
		"apiVersion": "kuma.io/v1alpha1", "kind": "MeshTrust",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"trustDomain": td,
			"caBundles":   []any{map[string]any{"type": "Pem", "pem": map[string]any{"value": pem}}},
		},
	}
}

// TestAccMeshTrustDomain_identityImport imports a cluster-scoped Sail Istio
// and a namespaced Kuma MeshTrust with import blocks that carry the resource
// identity (Terraform >= 1.12) instead of an ID: the identity the resource
// stored names the same object, and the import plans nothing.
func TestAccMeshTrustDomain_identityImport(t *testing.T) {
	name := acctest.UniqueName("sailid")
	ns := acctest.UniqueNamespace(t, acctest.West, "kumaid")
	peer := "peer-" + ns + ".test"
	kumaName := strings.ReplaceAll(peer, ".", "-")
	acctest.ApplyAsOperator(t, acctest.West, sailIstioGVR, sailOperatorObject(name, "old-"+name+".test"))
	getKuma := acctest.ObjectGetter(t, acctest.West, meshTrustGVR, ns, kumaName)
	const sailAddr, kumaAddr = "zerotrust_mesh_trust_domain.sail", "zerotrust_mesh_trust_domain.kuma"
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "sail" {
  cluster    = "west"
  mesh       = { kind = "istio_sail", name = %q }
  ca_address = "istio-csr.cert-manager.svc:443"
}

resource "zerotrust_mesh_trust_domain" "kuma" {
  cluster      = "west"
  mesh         = { kind = "kuma", namespace = %q }
  trust_domain = %q
  ca_bundles   = [%q]
}
`, name, ns, peer, peerPEM(t, peer))
	sailIdentity := meshIdentityChecks(acctest.West, "istio_sail", "", name)
	kumaIdentity := meshIdentityChecks(acctest.West, "kuma", ns, kumaName)
	importStep := func(addr string) resource.TestStep {
		return resource.TestStep{
			ResourceName:    addr,
			ImportState:     true,
			ImportStateKind: resource.ImportBlockWithResourceIdentity,
			ImportPlanChecks: resource.ImportPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(addr, plancheck.ResourceActionNoop)},
			},
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		CheckDestroy: func(*terraform.State) error {
			if _, err := getKuma(); !apierrors.IsNotFound(err) {
				return fmt.Errorf("MeshTrust %s/%s after destroy: %v, want it deleted", ns, kumaName, err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectIdentity(sailAddr, sailIdentity),
					statecheck.ExpectIdentity(kumaAddr, kumaIdentity),
				},
			},
			importStep(sailAddr),
			importStep(kumaAddr),
		},
	})
}

// TestAccMeshTrustDomain_list lists mesh objects of two kinds on one cluster,
// filtered by trust domain and by kind, then adopts what a query found the
// way the docs show it: `terraform query -generate-config-out`, apply the
// generated import blocks and resources, and the plan after that is empty.
func TestAccMeshTrustDomain_list(t *testing.T) {
	sailName := acctest.UniqueName("saills")
	ns := acctest.UniqueNamespace(t, acctest.West, "kumals")
	kymaNS := acctest.UniqueNamespace(t, acctest.West, "kymals")
	td, kymaTD := "list-"+sailName+".test", "kyma-"+kymaNS+".test"
	kumaName := acctest.UniqueName("trust")
	acctest.ApplyAsOperator(t, acctest.West, sailIstioGVR, sailOperatorObject(sailName, td))
	acctest.ApplyAsOperator(t, acctest.West, meshTrustGVR, kumaMeshTrustObject(ns, kumaName, td, peerPEM(t, td)))
	acctest.ApplyAsOperator(t, acctest.West, kymaIstioGVR, map[string]any{
		"apiVersion": "operator.kyma-project.io/v1alpha2", "kind": "Istio",
		"metadata": map[string]any{"name": "default", "namespace": kymaNS},
		"spec":     map[string]any{"config": map[string]any{"trustDomain": kymaTD}},
	})
	provider := acctest.ProviderConfig(t)
	query := fmt.Sprintf(`
list "zerotrust_mesh_trust_domain" "by_trust_domain" {
  provider         = zerotrust
  include_resource = true
  config {
    cluster      = "west"
    trust_domain = %q
  }
}

list "zerotrust_mesh_trust_domain" "kyma" {
  provider         = zerotrust
  include_resource = true
  config {
    cluster      = "west"
    kind         = "istio_kyma"
    trust_domain = %q
  }
}
`, td, kymaTD)
	const byTD, kyma = "zerotrust_mesh_trust_domain.by_trust_domain", "zerotrust_mesh_trust_domain.kyma"
	sailIdentity := meshIdentityChecks(acctest.West, "istio_sail", "", sailName)
	kumaIdentity := meshIdentityChecks(acctest.West, "kuma", ns, kumaName)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)},
		Steps: []resource.TestStep{
			{Config: provider},
			{
				Query:  true,
				Config: query,
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength(byTD, 2),
					querycheck.ExpectIdentity(byTD, sailIdentity),
					querycheck.ExpectIdentity(byTD, kumaIdentity),
					querycheck.ExpectResourceDisplayName(byTD, queryfilter.ByResourceIdentity(sailIdentity),
						knownvalue.StringExact("west/istio_sail:"+sailName)),
					querycheck.ExpectResourceDisplayName(byTD, queryfilter.ByResourceIdentity(kumaIdentity),
						knownvalue.StringExact("west/kuma:"+ns+":"+kumaName)),
					querycheck.ExpectResourceKnownValues(byTD, queryfilter.ByResourceIdentity(kumaIdentity), []querycheck.KnownValueCheck{
						{Path: tfjsonpath.New("trust_domain"), KnownValue: knownvalue.StringExact(td)},
						{Path: tfjsonpath.New("mesh").AtMapKey("kuma_mesh"), KnownValue: knownvalue.Null()},
					}),
					querycheck.ExpectLength(kyma, 1),
					querycheck.ExpectIdentity(kyma, meshIdentityChecks(acctest.West, "istio_kyma", kymaNS, "default")),
				},
			},
		},
	})

	// The generate-config round trip: both lists, three objects.
	acctest.QueryGenerateConfig(t, provider, query, 3)
}

// TestAccMeshTrustDomain_stateWithoutIdentity applies with Terraform 1.11,
// which stores no resource identity, then plans with the current CLI:
// nothing to change, and a refresh records the identity.
func TestAccMeshTrustDomain_stateWithoutIdentity(t *testing.T) {
	t.Parallel()
	ns := acctest.UniqueNamespace(t, acctest.West, "kumanoid")
	peer := "peer-" + ns + ".test"
	kumaName := strings.ReplaceAll(peer, ".", "-")
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_mesh_trust_domain" "this" {
  cluster      = "west"
  mesh         = { kind = "kuma", namespace = %q }
  trust_domain = %q
  ca_bundles   = [%q]
}
`, ns, peer, peerPEM(t, peer))
	get := acctest.ObjectGetter(t, acctest.West, meshTrustGVR, ns, kumaName)
	acctest.StateWithoutIdentity(t, config,
		map[string]any{"cluster": acctest.West, "kind": "kuma", "namespace": ns, "name": kumaName},
		func() error {
			if _, err := get(); !apierrors.IsNotFound(err) {
				return fmt.Errorf("MeshTrust %s/%s after destroy: %v, want it deleted", ns, kumaName, err)
			}
			return nil
		})
}
