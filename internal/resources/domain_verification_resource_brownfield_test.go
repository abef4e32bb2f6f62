package resources_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// waitToken polls until the stand-in controller has issued a token for the
// object name, so the import reads a complete object.
func waitToken(t *testing.T, cluster, name string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for dvStatus(t, cluster, domainverification.V1, name).Token == "" {
		if time.Now().After(deadline) {
			t.Fatalf("%s: DomainVerification %s has no token after 60s", cluster, name)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestAccDomainVerification_brownfieldImport adopts DomainVerifications that
// another field manager created with only spec.domain (as Kuadrant's ingress
// webhook does) and whose token the controller issued, with `terraform
// import` and with an `import {}` block, from the configuration a user would
// write (just `domain`): each plans no change, reads the controller's token,
// and writes nothing to the object; destroy leaves them in place.
func TestAccDomainVerification_brownfieldImport(t *testing.T) {
	const cluster = acctest.East
	acctest.DomainVerificationController(t, cluster)
	id := acctest.UniqueName("brown")
	byCommand, byBlock := "cmd-"+id+"."+acctest.DNSZone, "blk-"+id+"."+acctest.DNSZone
	gvr := kube.DomainVerificationV1.GVR()
	created := map[string]*unstructured.Unstructured{}
	for _, d := range []string{byCommand, byBlock} {
		created[d] = createAsOther(t, cluster, gvr, map[string]any{
			"apiVersion": kube.DomainVerificationV1.APIVersion(), "kind": "DomainVerification",
			"metadata": map[string]any{"name": d}, "spec": map[string]any{"domain": d},
		})
		t.Cleanup(func() {
			_ = acctest.Dynamic(t, cluster).Resource(gvr).Delete(context.Background(), d, metav1.DeleteOptions{})
		})
		waitToken(t, cluster, d)
	}
	untouched := resource.ComposeAggregateTestCheckFunc(
		checkUntouched(t, cluster, gvr, created[byCommand]),
		checkUntouched(t, cluster, gvr, created[byBlock]),
	)
	res := func(name, domain string) string {
		return fmt.Sprintf("\nresource \"zerotrust_domain_verification\" %q {\n  domain = %q\n}\n", name, domain)
	}
	const cmdAddr, blkAddr = "zerotrust_domain_verification.cmd", "zerotrust_domain_verification.blk"
	cmdOnly := acctest.ProviderConfig(t) + res("cmd", byCommand)
	both := cmdOnly + res("blk", byBlock)

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		// Imported objects another manager made are adopted: destroy leaves them.
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkLeftInPlace(t, cluster, gvr, created[byCommand]), checkLeftInPlace(t, cluster, gvr, created[byBlock])),
		Steps: []resource.TestStep{
			{
				Config:             cmdOnly,
				ResourceName:       cmdAddr,
				ImportState:        true,
				ImportStateId:      byCommand,
				ImportStatePersist: true,
			},
			{
				Config: cmdOnly,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(cmdAddr, tfjsonpath.New("id"), knownvalue.StringExact(byCommand)),
					statecheck.ExpectKnownValue(cmdAddr, tfjsonpath.New("api_version"), knownvalue.StringExact(domainverification.V1)),
					statecheck.ExpectKnownValue(cmdAddr, tfjsonpath.New("token"), sameTokenOnCluster(t, cluster, domainverification.V1, byCommand)),
					statecheck.ExpectKnownValue(cmdAddr, tfjsonpath.New("txt_record_name"), knownvalue.StringExact(byCommand)),
					statecheck.ExpectKnownValue(cmdAddr, tfjsonpath.New("adopted"), knownvalue.Bool(true)),
				},
				Check: checkUntouched(t, cluster, gvr, created[byCommand]),
			},
			{
				Config: both + fmt.Sprintf("\nimport {\n  to = %s\n  id = %q\n}\n", blkAddr, byBlock),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectEmptyPlan(),
						plancheck.ExpectResourceAction(blkAddr, plancheck.ResourceActionNoop),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(blkAddr, tfjsonpath.New("token"), sameTokenOnCluster(t, cluster, domainverification.V1, byBlock)),
					statecheck.ExpectKnownValue(blkAddr, tfjsonpath.New("force_conflicts"), knownvalue.Bool(false)),
				},
				Check: untouched,
			},
			{
				// terraform-plugin-testing's plannable import, which imports
				// the resource again into a copy of the state.
				Config:          both,
				ResourceName:    blkAddr,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   byBlock,
				ImportPlanChecks: resource.ImportPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(blkAddr, plancheck.ResourceActionNoop),
						plancheck.ExpectKnownValue(blkAddr, tfjsonpath.New("name"), knownvalue.StringExact(byBlock)),
					},
				},
			},
		},
	})
}
