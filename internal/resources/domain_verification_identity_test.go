package resources_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

const dvType = "zerotrust_domain_verification"

// dvIdentity is the identity a DomainVerification on cluster ("" for the
// default connection) named name has.
func dvIdentity(cluster, name string) map[string]knownvalue.Check {
	return wantIdentity(cluster, "name", name)
}

// TestAccDomainVerification_identityImport imports by resource identity
// (an import block with `identity`, Terraform >= 1.12): once on a named
// cluster, once on the default connection, whose identity has no cluster;
// and once more with configuration generated from the import, which must
// plan no change.
func TestAccDomainVerification_identityImport(t *testing.T) {
	acctest.DomainVerificationController(t, acctest.East)
	acctest.DomainVerificationController(t, acctest.West)
	id := acctest.UniqueName("ident")
	onWest, onDefault := "west-"+id+"."+acctest.DNSZone, "dflt-"+id+"."+acctest.DNSZone
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
resource %[1]q "west" {
  cluster = %[2]q
  domain  = %[3]q
}

resource %[1]q "dflt" {
  domain = %[4]q
}
`, dvType, acctest.West, onWest, onDefault)

	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeAggregateTestCheckFunc(
			checkDVGone(t, acctest.West, onWest), checkDVGone(t, acctest.East, onDefault)),
		Steps: identityImportSteps(config,
			identityImport{addr: dvType + ".west", identity: dvIdentity(acctest.West, onWest), matchesState: []string{"name", "cluster"}, generate: true},
			identityImport{addr: dvType + ".dflt", identity: dvIdentity("", onDefault)}),
	})
}

// TestAccDomainVerification_list lists DomainVerifications another manager
// created (as Kuadrant's ingress webhook does) with `terraform query`, by
// domain and by cluster. Then, with the terraform CLI directly (the testing
// framework runs no `query -generate-config-out`), it generates their
// configuration and import blocks, imports them, and expects a plan without
// changes afterwards.
func TestAccDomainVerification_list(t *testing.T) {
	acctest.DomainVerificationController(t, acctest.East)
	acctest.DomainVerificationController(t, acctest.West)
	id := acctest.UniqueName("list")
	// b's object name is not its domain: generated configuration must say so.
	a, b, c := "a-"+id+"."+acctest.DNSZone, "b-"+id+"."+acctest.DNSZone, "c-"+id+"."+acctest.DNSZone
	bName := "bname-" + id
	objects := []struct{ cluster, name, domain string }{
		{acctest.West, a, a}, {acctest.West, bName, b}, {acctest.East, c, c},
	}
	gvr := kube.DomainVerificationV1.GVR()
	for _, o := range objects {
		createAsOther(t, o.cluster, gvr, map[string]any{
			"apiVersion": kube.DomainVerificationV1.APIVersion(), "kind": "DomainVerification",
			"metadata": map[string]any{"name": o.name}, "spec": map[string]any{"domain": o.domain},
		})
	}
	t.Cleanup(func() {
		for _, o := range objects {
			err := acctest.Dynamic(t, o.cluster).Resource(gvr).Delete(context.Background(), o.name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cleanup: delete %s on %s: %v", o.name, o.cluster, err)
			}
		}
	})
	for _, o := range objects {
		waitToken(t, o.cluster, o.name)
	}

	listBlock := func(name, filters string) string {
		return fmt.Sprintf("list %q %q {\n  provider         = zerotrust\n  include_resource = true\n  config {\n%s  }\n}\n",
			dvType, name, filters)
	}
	query := listBlock("a", fmt.Sprintf("    domain = %q\n", a)) +
		listBlock("west", fmt.Sprintf("    cluster = %q\n", acctest.West)) +
		listBlock("c", fmt.Sprintf("    domain = %q\n", c))
	westA, westB := dvIdentity(acctest.West, a), dvIdentity(acctest.West, bName)

	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)},
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: acctest.ProviderConfig(t)},
			{
				Query:  true,
				Config: query,
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength(dvType+".a", 1),
					querycheck.ExpectIdentity(dvType+".a", westA),
					querycheck.ExpectResourceDisplayName(dvType+".a", queryfilter.ByResourceIdentity(westA),
						knownvalue.StringExact(fmt.Sprintf("west/%s (%s)", a, a))),
					querycheck.ExpectResourceKnownValues(dvType+".a", queryfilter.ByResourceIdentity(westA),
						[]querycheck.KnownValueCheck{
							{Path: tfjsonpath.New("id"), KnownValue: knownvalue.StringExact("west/" + a)},
							{Path: tfjsonpath.New("cluster"), KnownValue: knownvalue.StringExact(acctest.West)},
							{Path: tfjsonpath.New("domain"), KnownValue: knownvalue.StringExact(a)},
							{Path: tfjsonpath.New("api_version"), KnownValue: knownvalue.StringExact(domainverification.V1)},
							{Path: tfjsonpath.New("force_conflicts"), KnownValue: knownvalue.Bool(false)},
							{Path: tfjsonpath.New("token"), KnownValue: sameTokenOnCluster(t, acctest.West, domainverification.V1, a)},
						}),
					// Other tests' objects are on west too.
					querycheck.ExpectLengthAtLeast(dvType+".west", 2),
					querycheck.ExpectIdentity(dvType+".west", westA),
					querycheck.ExpectIdentity(dvType+".west", westB),
					querycheck.ExpectResourceDisplayName(dvType+".west", queryfilter.ByResourceIdentity(westB),
						knownvalue.StringExact(fmt.Sprintf("west/%s (%s)", bName, b))),
					// Unset cluster lists every cluster of the provider once: the
					// lab's default connection reaches "east" too, so it is not
					// listed again.
					querycheck.ExpectLength(dvType+".c", 1),
					querycheck.ExpectIdentity(dvType+".c", dvIdentity(acctest.East, c)),
				},
			},
		},
	})

	acctest.QueryGenerateConfig(t, acctest.ProviderConfig(t),
		listBlock("west", fmt.Sprintf("    cluster = %q\n    domain  = %q\n", acctest.West, a))+
			listBlock("b", fmt.Sprintf("    cluster = %q\n    domain  = %q\n", acctest.West, b))+
			listBlock("c", fmt.Sprintf("    cluster = %q\n    domain  = %q\n", acctest.East, c)),
		3)
}
