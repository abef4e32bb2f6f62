package resources_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// fastPathCSIDs is the number of plain ClusterSPIFFEIDs
// TestAccClusterSPIFFEIDFastPath_sameAnswers manages.
const fastPathCSIDs = 8

// TestAccClusterSPIFFEIDFastPath_sameAnswers: every refresh and unchanged
// plan of zerotrust_cluster_spiffe_id the fast path answers
// (internal/fastpath) is answered by the framework too and must be the
// same, through creation, plans after apply and drift: a changed and a
// deleted object (the fast path refreshes the changed one, the framework
// plans the update and the re-creation) and a ttl rewritten in other
// words ("1h" for "60m": the refresh keeps the configured text, as the
// framework's semantic equality does, and plans nothing). One of them
// federates with a trust domain whose bundle a zerotrust_spire_bundle
// carries, so its refresh asks SPIRE whether its workloads federate.
func TestAccClusterSPIFFEIDFastPath_sameAnswers(t *testing.T) {
	acctest.Spire(t, acctest.East)
	id := acctest.UniqueName("fpc")
	name := func(i int) string { return fmt.Sprintf("fpc%d-%s", i, id) }
	peer := "fpcpeer-" + id + ".test"
	dir := t.TempDir()
	writeFastPathBundles(t, dir, func(int) string { return peer })
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_cluster_spiffe_id" "many" {
  count              = %[1]d
  cluster            = "east"
  name               = "fpc${count.index}-%[2]s"
  spiffe_id_template = %[3]q
  pod_selector = {
    match_labels = { app = "fpc${count.index}-%[2]s" }
  }
  namespace_selector = {
    match_expressions = [{ key = "kubernetes.io/metadata.name", operator = "In", values = ["fpc"] }]
  }
  ttl             = "60m"
  force_conflicts = true # takes the drifted field back
}

resource "zerotrust_spire_bundle" "peer" {
  cluster      = "east"
  trust_domain = %[4]q
  bundle       = file("%[5]s/0.json")
}

resource "zerotrust_cluster_spiffe_id" "federating" {
  cluster            = "east"
  name               = "fpcfed-%[2]s"
  spiffe_id_template = %[3]q
  pod_selector = {
    match_labels = { app = "fpcfed-%[2]s" }
  }
  federates_with = [zerotrust_spire_bundle.peer.trust_domain]
  dns_name_templates = ["{{ .PodMeta.Name }}.fpc.test"]
  hint           = "fast"
  admin          = false
}
`, fastPathCSIDs, id, csidTemplate, peer, dir)
	cmp := &fastPathComparer{t: t}
	dyn := acctest.Dynamic(t, acctest.East)
	ctx := context.Background()
	var afterApply map[string]int
	patch := func(i int, body string) {
		if _, err := dyn.Resource(csidGVR).Patch(ctx, name(i), k8stypes.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: "fpc-other"}); err != nil {
			t.Fatalf("drift: %v", err)
		}
	}
	instances := fastPathCSIDs + 2

	var names []string
	for i := range fastPathCSIDs {
		names = append(names, name(i))
	}

	// Not parallel: the bundle is carried into east's SPIRE server, which
	// the other tests of spire_bundle inspect.
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: cmp.factories(),
		CheckDestroy:             acctest.CheckGone(t, acctest.East, csidGVR, "", append(names, "fpcfed-"+id)...),
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					afterApply = cmp.snapshot()
					patch(1, `{"spec":{"spiffeIDTemplate":"spiffe://{{ .TrustDomain }}/someone-elses"}}`)
					patch(3, `{"spec":{"ttl":"1h"}}`)
					if err := dyn.Resource(csidGVR).Delete(ctx, name(2), metav1.DeleteOptions{}); err != nil {
						t.Fatalf("drift: %v", err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("zerotrust_cluster_spiffe_id.many[1]", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("zerotrust_cluster_spiffe_id.many[2]", plancheck.ResourceActionCreate),
						plancheck.ExpectResourceAction("zerotrust_cluster_spiffe_id.many[3]", plancheck.ResourceActionNoop),
						plancheck.ExpectResourceAction("zerotrust_cluster_spiffe_id.federating", plancheck.ResourceActionNoop),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})

	got := cmp.snapshot()
	t.Logf("answers: after the first apply %v, in all %v", afterApply, got)
	// The first step's refresh after apply and its plans of the unchanged
	// instances come from the fast path, and so do most of the second step's.
	if afterApply["read/fast"] < instances || afterApply["plan/fast"] < instances {
		t.Errorf("the fast path answered %v by the end of the first step, want >= %d reads and plans", afterApply, instances)
	}
	if got["upgrade/framework"] > 0 || got["upgrade/fast"] < instances {
		t.Errorf("answers %v: want every state upgrade from the fast path", got)
	}
	// Creation plans and drift plans are the framework's.
	if got["plan/framework"] < instances+2 {
		t.Errorf("the framework answered %v, want the creation and drift plans", got)
	}
}
