package resources_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

const ftdType = "zerotrust_federated_trust_domain"

func fastPathConfig(t *testing.T, id, imported string) string {
	t.Helper()
	cfg := acctest.ProviderConfig(t) + fmt.Sprintf(`
# Enough objects on one cluster for the refresh to read most from one LIST.
resource "zerotrust_federated_trust_domain" "many" {
  count               = 12
  cluster             = "west"
  trust_domain        = "fp${count.index}-%[1]s.test"
  bundle_endpoint_url = "https://spire.fp${count.index}-%[1]s.test:8443"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = "spiffe://fp${count.index}-%[1]s.test/spire/server"
  }
  force_conflicts = true # takes the drifted field back
}

# The default connection, every optional attribute unset.
resource "zerotrust_federated_trust_domain" "defaults" {
  trust_domain        = "fpdefault-%[1]s.test"
  bundle_endpoint_url = "https://spire.fpdefault-%[1]s.test"
  bundle_endpoint_profile = { type = "https_web" }
}

# Every optional attribute set, defaults to their non-default values.
resource "zerotrust_federated_trust_domain" "explicit" {
  cluster             = "east"
  name                = "fpexplicit-%[1]s"
  trust_domain        = "fpexplicit_%[1]s.test"
  bundle_endpoint_url = "https://spire.fpexplicit.test:8443/bundle"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = "spiffe://fpexplicit_%[1]s.test/spire/server"
  }
  class_name               = "fp-class"
  force_conflicts          = true
  wait_for_bundle          = false
  delete_bundle_on_destroy = false
  spire_server             = { namespace = "spire-fp" }
  timeouts {
    create = "2m"
  }
}
`, id)
	if imported != "" {
		cfg += fmt.Sprintf(`
import {
  to = zerotrust_federated_trust_domain.adopted
  id = "west/%[1]s"
}

resource "zerotrust_federated_trust_domain" "adopted" {
  cluster             = "west"
  name                = %[1]q
  trust_domain        = "%[1]s.test"
  bundle_endpoint_url = "https://spire.%[1]s.test:8443"
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = "spiffe://%[1]s.test/spire/server"
  }
}
`, imported)
	}
	return cfg
}

// TestAccFederatedTrustDomainFastPath_sameAnswers: every configuration
// check, state upgrade, refresh and unchanged plan the fast path answers
// (internal/fastpath) is answered by the framework too and must be the same, through creation, plans after
// apply, drift (a changed and a deleted object: the fast path refreshes the
// changed one, the framework plans the update and the re-creation), and an
// import of an object another manager made with its own class (the
// framework's first Read after import, the fast path's plans after it).
func TestAccFederatedTrustDomainFastPath_sameAnswers(t *testing.T) {
	id := acctest.UniqueName("fp")
	adopted := "fpadopted-" + id
	cmp := &fastPathComparer{t: t}
	dyn := acctest.Dynamic(t, "west")
	ctx := context.Background()
	many := func(i int) string { return fmt.Sprintf("fp%d-%s.test", i, id) }
	var afterApply map[string]int

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: cmp.factories(),
		Steps: []resource.TestStep{
			{Config: fastPathConfig(t, id, "")},
			{
				PreConfig: func() {
					afterApply = cmp.snapshot()
					// Drift made by someone else: a changed URL, a deleted object.
					patch := []byte(`{"spec":{"bundleEndpointURL":"https://elsewhere.test:8443"}}`)
					if _, err := dyn.Resource(cftdGVR).Patch(ctx, many(1), k8stypes.MergePatchType, patch, metav1.PatchOptions{FieldManager: "fp-other"}); err != nil {
						t.Fatalf("drift: %v", err)
					}
					if err := dyn.Resource(cftdGVR).Delete(ctx, many(2), metav1.DeleteOptions{}); err != nil {
						t.Fatalf("drift: %v", err)
					}
				},
				Config: fastPathConfig(t, id, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("zerotrust_federated_trust_domain.many[1]", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("zerotrust_federated_trust_domain.many[2]", plancheck.ResourceActionCreate),
					plancheck.ExpectResourceAction("zerotrust_federated_trust_domain.many[3]", plancheck.ResourceActionNoop),
				}},
			},
			{
				PreConfig: func() {
					obj := &unstructured.Unstructured{Object: map[string]any{
						"apiVersion": "spire.spiffe.io/v1alpha1", "kind": "ClusterFederatedTrustDomain",
						"metadata": map[string]any{"name": adopted},
						"spec": map[string]any{
							"trustDomain": adopted + ".test", "bundleEndpointURL": "https://spire." + adopted + ".test:8443",
							"bundleEndpointProfile": map[string]any{"type": "https_spiffe", "endpointSPIFFEID": "spiffe://" + adopted + ".test/spire/server"},
							"className":             "someone-elses",
						},
					}}
					if _, err := dyn.Resource(cftdGVR).Create(ctx, obj, metav1.CreateOptions{FieldManager: "fp-other"}); err != nil {
						t.Fatalf("creating the object to adopt: %v", err)
					}
				},
				Config: fastPathConfig(t, id, adopted),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("zerotrust_federated_trust_domain.adopted", plancheck.ResourceActionNoop),
				}},
			},
		},
	})

	got := cmp.snapshot()
	t.Logf("answers: after the first apply %v, in all %v", afterApply, got)
	// The first step's refresh after apply and its plans of 14 unchanged
	// instances come from the fast path; so does most of every later step.
	// One read per cluster whose SPIRE server cannot be asked (east and west
	// run none here) goes to the framework, which says so once.
	if afterApply["read/fast"] < 14-2 || afterApply["plan/fast"] < 14 {
		t.Errorf("the fast path answered %v by the end of the first step, want >= 12 reads and 14 plans", afterApply)
	}
	// Every configuration here is valid, and every state of the schema's version.
	if got["validate/framework"] > 0 || got["validate/fast"] < 14 || got["upgrade/framework"] > 0 || got["upgrade/fast"] < 14 {
		t.Errorf("answers %v: want every configuration check and state upgrade from the fast path", got)
	}
	// Creation plans, drift plans and the first read after import are the framework's.
	if got["plan/framework"] < 14+2 || got["read/framework"] < 1 {
		t.Errorf("the framework answered %v, want the creation and drift plans and the read after import", got)
	}
}
