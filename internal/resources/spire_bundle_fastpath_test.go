package resources_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

// fastPathBundles is the number of bundles TestAccSpireBundleFastPath_sameAnswers
// carries into east's SPIRE server.
const fastPathBundles = 6

// writeFastPathBundles writes a bundle of a new CA for each trust domain tds
// names into dir (<index>.json): peers that need no SPIRE server of their
// own, since nothing fetches from them.
func writeFastPathBundles(t *testing.T, dir string, td func(i int) string) {
	t.Helper()
	for i := range fastPathBundles {
		id := spiffeid.RequireTrustDomainFromString(td(i))
		ca := bundletest.NewCA(t, id, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.json", i)), []byte(bundletest.BundleJSON(t, id, ca)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAccSpireBundleFastPath_sameAnswers: every refresh and unchanged plan
// of zerotrust_spire_bundle the fast path answers (internal/fastpath; the
// refresh still asks SPIRE) is answered by the framework too and must be the
// same, through creation, plans after apply and drift (a bundle deleted and
// one replaced by hand: the fast path refreshes both, the framework plans
// setting them again).
func TestAccSpireBundleFastPath_sameAnswers(t *testing.T) {
	east := acctest.Spire(t, acctest.East)
	id := acctest.UniqueName("fpb")
	td := func(i int) string { return fmt.Sprintf("fpb%d-%s.test", i, id) }
	dir := t.TempDir()
	writeFastPathBundles(t, dir, td)
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_spire_bundle" "many" {
  count        = %d
  cluster      = "east"
  trust_domain = "fpb${count.index}-%s.test"
  bundle       = file("%s/${count.index}.json")
}
`, fastPathBundles, id, dir)
	cmp := &fastPathComparer{t: t}
	ctx := context.Background()
	var afterApply map[string]int

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: cmp.factories(),
		CheckDestroy: func(*terraform.State) error {
			for i := range fastPathBundles {
				if out, err := east.CLI(ctx, "bundle", "list", "-id", "spiffe://"+td(i)); err == nil {
					return fmt.Errorf("east still holds the bundle of %s:\n%s", td(i), out)
				}
			}
			return nil
		},
		Steps: []resource.TestStep{
			{Config: config},
			{
				PreConfig: func() {
					afterApply = cmp.snapshot()
					// Drift made by hand: one bundle deleted, one replaced.
					if _, err := east.CLI(ctx, "bundle", "delete", "-id", "spiffe://"+td(1), "-mode", "dissociate"); err != nil {
						t.Fatal(err)
					}
					other := spiffeid.RequireTrustDomainFromString(td(2))
					ca := bundletest.NewCA(t, other, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
					if err := east.SetFederatedBundle(ctx, td(2), []byte(bundletest.BundleJSON(t, other, ca))); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("zerotrust_spire_bundle.many[1]", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("zerotrust_spire_bundle.many[2]", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("zerotrust_spire_bundle.many[3]", plancheck.ResourceActionNoop),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})

	got := cmp.snapshot()
	t.Logf("answers: after the first apply %v, in all %v", afterApply, got)
	// The first step's refresh after apply and its plans of the unchanged
	// bundles come from the fast path, and so do most of the second step's.
	if afterApply["read/fast"] < fastPathBundles || afterApply["plan/fast"] < fastPathBundles {
		t.Errorf("the fast path answered %v by the end of the first step, want >= %d reads and plans", afterApply, fastPathBundles)
	}
	if got["upgrade/framework"] > 0 || got["upgrade/fast"] < fastPathBundles {
		t.Errorf("answers %v: want every state upgrade from the fast path", got)
	}
	// Creation plans and the plans that set a drifted bundle again are the framework's.
	if got["plan/framework"] < fastPathBundles+2 {
		t.Errorf("the framework answered %v, want the creation and drift plans", got)
	}
}
