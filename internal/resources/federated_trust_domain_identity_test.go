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
)

const ftdAddr = "zerotrust_federated_trust_domain"

// ftdWebConfig is a zerotrust_federated_trust_domain with the https_web
// profile; cluster "" leaves the attribute out (the default connection).
func ftdWebConfig(resName, cluster, td string) string {
	clusterLine := ""
	if cluster != "" {
		clusterLine = fmt.Sprintf("  cluster = %q\n", cluster)
	}
	return fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" %q {
%s  trust_domain            = %q
  bundle_endpoint_url     = "https://bundles.%s"
  bundle_endpoint_profile = { type = "https_web" }
}
`, resName, clusterLine, td, td)
}

// TestAccFederatedTrustDomain_identityImport imports by resource identity
// (an import block with `identity`, Terraform >= 1.12): once on a named
// cluster, once on the default connection, whose identity has no cluster.
func TestAccFederatedTrustDomain_identityImport(t *testing.T) {
	id := acctest.UniqueName("ident")
	onWest, onDefault := "west-"+id+".test", "dflt-"+id+".test"
	nameWest, nameDefault := "west-"+id+".test", "dflt-"+id+".test"
	config := acctest.ProviderConfig(t) + ftdWebConfig("west", acctest.West, onWest) + ftdWebConfig("dflt", "", onDefault)

	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkCFTDsGone(t, map[string]string{acctest.West: nameWest, acctest.East: nameDefault}),
		Steps: identityImportSteps(config,
			identityImport{addr: ftdAddr + ".west", identity: wantIdentity(acctest.West, "name", nameWest), matchesState: []string{"name", "cluster"}},
			identityImport{addr: ftdAddr + ".dflt", identity: wantIdentity("", "name", nameDefault)}),
	})
}

// TestAccFederatedTrustDomain_list lists objects another manager created on
// east and west from one provider block (`terraform query`), filtered by
// trust domain and class, and leaves out an object the resource would refuse
// as configuration. Then, with the terraform CLI directly (the testing
// framework runs no `query -generate-config-out`), it generates the
// configuration and import blocks for the listed objects, imports them, and
// expects a plan without changes afterwards.
func TestAccFederatedTrustDomain_list(t *testing.T) {
	id := acctest.UniqueName("list")
	shared, spiffe, invalid := "shared-"+id+".test", "spiffe-"+id+".test", "bad-"+id+".test"
	class := "cls-" + id
	objects := []struct{ cluster, name string }{
		{acctest.East, "east-" + shared}, {acctest.West, "west-" + shared}, {acctest.East, spiffe}, {acctest.West, invalid},
	}
	createAsOther(t, acctest.East, cftdGVR, cftdObject("east-"+shared, map[string]any{
		"trustDomain": shared, "bundleEndpointURL": "https://bundles." + shared,
		"bundleEndpointProfile": map[string]any{"type": "https_web"}, "className": class,
	}))
	createAsOther(t, acctest.West, cftdGVR, cftdObject("west-"+shared, map[string]any{
		"trustDomain": shared, "bundleEndpointURL": "https://bundles." + shared,
		"bundleEndpointProfile": map[string]any{"type": "https_web"},
	}))
	createAsOther(t, acctest.East, cftdGVR, cftdObject(spiffe, map[string]any{
		"trustDomain": spiffe, "bundleEndpointURL": "https://spire." + spiffe + ":8443",
		"bundleEndpointProfile": map[string]any{"type": "https_spiffe", "endpointSPIFFEID": "spiffe://" + spiffe + "/spire/server"},
		"trustDomainBundle":     testBundle(t, spiffe),
	}))
	// spire-controller-manager skips https_web with an endpoint SPIFFE ID,
	// and the resource refuses it: not listed.
	createAsOther(t, acctest.West, cftdGVR, cftdObject(invalid, map[string]any{
		"trustDomain": invalid, "bundleEndpointURL": "https://bundles." + invalid,
		"bundleEndpointProfile": map[string]any{"type": "https_web", "endpointSPIFFEID": "spiffe://" + invalid + "/spire/server"},
	}))
	t.Cleanup(func() {
		for _, o := range objects {
			err := acctest.Dynamic(t, o.cluster).Resource(cftdGVR).Delete(context.Background(), o.name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cleanup: delete %s on %s: %v", o.name, o.cluster, err)
			}
		}
	})

	listBlock := func(name, filters string) string {
		return fmt.Sprintf("list %q %q {\n  provider         = zerotrust\n  include_resource = true\n  config {\n%s  }\n}\n", ftdAddr, name, filters)
	}
	query := listBlock("shared", fmt.Sprintf("    trust_domain = %q\n", shared)) +
		listBlock("west", fmt.Sprintf("    cluster = %q\n    trust_domain = %q\n", acctest.West, shared)) +
		listBlock("classed", fmt.Sprintf("    trust_domain = %q\n    class_name = %q\n", shared, class)) +
		listBlock("classless", fmt.Sprintf("    trust_domain = %q\n    class_name = \"\"\n", shared)) +
		listBlock("invalid", fmt.Sprintf("    trust_domain = %q\n", invalid))
	identity := func(cluster, name string) map[string]knownvalue.Check {
		var c knownvalue.Check = knownvalue.Null()
		if cluster != "" {
			c = knownvalue.StringExact(cluster)
		}
		return map[string]knownvalue.Check{"cluster": c, "name": knownvalue.StringExact(name)}
	}
	westShared := identity(acctest.West, "west-"+shared)

	resource.ParallelTest(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)},
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: acctest.ProviderConfig(t)},
			{
				Query:  true,
				Config: query,
				QueryResultChecks: []querycheck.QueryResultCheck{
					// Unset cluster lists every cluster of the provider.
					querycheck.ExpectIdentity(ftdAddr+".shared", westShared),
					querycheck.ExpectIdentity(ftdAddr+".shared", identity(acctest.East, "east-"+shared)),
					querycheck.ExpectLength(ftdAddr+".west", 1),
					querycheck.ExpectIdentity(ftdAddr+".west", westShared),
					querycheck.ExpectResourceDisplayName(ftdAddr+".west", queryfilter.ByResourceIdentity(westShared),
						knownvalue.StringExact(fmt.Sprintf("west/west-%s (federates with %s)", shared, shared))),
					querycheck.ExpectResourceKnownValues(ftdAddr+".west", queryfilter.ByResourceIdentity(westShared),
						[]querycheck.KnownValueCheck{
							{Path: tfjsonpath.New("id"), KnownValue: knownvalue.StringExact("west/west-" + shared)},
							{Path: tfjsonpath.New("class_name"), KnownValue: knownvalue.Null()},
							{Path: tfjsonpath.New("trust_domain_bundle"), KnownValue: knownvalue.Null()},
						}),
					querycheck.ExpectIdentity(ftdAddr+".classed", identity(acctest.East, "east-"+shared)),
					querycheck.ExpectNoIdentity(ftdAddr+".classed", westShared),
					// class_name = "" lists the objects without a class.
					querycheck.ExpectLength(ftdAddr+".classless", 1),
					querycheck.ExpectIdentity(ftdAddr+".classless", westShared),
					querycheck.ExpectLength(ftdAddr+".invalid", 0),
				},
			},
		},
	})

	// The generate-config round trip, for one object per cluster.
	acctest.QueryGenerateConfig(t, acctest.ProviderConfig(t),
		listBlock("west", fmt.Sprintf("    cluster = %q\n    trust_domain = %q\n", acctest.West, shared))+
			listBlock("spiffe", fmt.Sprintf("    cluster = %q\n    trust_domain = %q\n", acctest.East, spiffe)), 2)
}

// TestAccFederatedTrustDomain_stateWithoutIdentity applies with Terraform
// 1.11, which stores no resource identity, then plans with the current CLI:
// nothing to change, and a refresh records the identity.
func TestAccFederatedTrustDomain_stateWithoutIdentity(t *testing.T) {
	t.Parallel()
	td := "old-" + acctest.UniqueName("noident") + ".test"
	acctest.StateWithoutIdentity(t, acctest.ProviderConfig(t)+ftdWebConfig("old", acctest.West, td),
		map[string]any{"cluster": acctest.West, "name": td},
		func() error { return checkCFTDsGone(t, map[string]string{acctest.West: td})(nil) })
}
