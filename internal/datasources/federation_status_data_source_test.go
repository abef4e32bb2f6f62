package datasources_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// fsMember is one cluster of the test's mesh and its SPIRE server.
type fsMember struct {
	name  string
	c     *harness.Cluster
	spire *harness.Spire
}

// fsConfig federates every ordered pair of members (wait_for_bundle, so
// SPIRE holds every peer's bundle when the apply ends) and reads the status
// of all clusters and, without endpoint checks, of fswest alone. dependsOn
// orders the first read after the federations; later steps read at plan
// time, before the apply repairs what the step broke.
func fsConfig(t *testing.T, members []fsMember, dependsOn bool) string {
	t.Helper()
	clusters := make([]*harness.Cluster, len(members))
	peers := map[string]map[string]string{}
	for i, m := range members {
		clusters[i] = m.c
		bundle, err := m.spire.BundleShow(context.Background(), "spiffe")
		if err != nil {
			t.Fatal(err)
		}
		peers[m.name] = map[string]string{"trust_domain": m.spire.TrustDomain, "url": m.spire.BundleEndpointURL,
			"id": m.spire.EndpointSPIFFEID, "bundle": string(bundle)}
	}
	peersJSON, err := json.Marshal(peers)
	if err != nil {
		t.Fatal(err)
	}
	deps := ""
	if dependsOn {
		deps = "depends_on = [zerotrust_federated_trust_domain.peer]"
	}
	return acctest.ProviderConfigFor(t, clusters...) + fmt.Sprintf(`
locals {
  peers = jsondecode(%q)
  pairs = {
    for p in setproduct(keys(local.peers), keys(local.peers)) : "${p[0]}->${p[1]}" => { cluster = p[0], peer = p[1] }
    if p[0] != p[1]
  }
}

resource "zerotrust_federated_trust_domain" "peer" {
  for_each = local.pairs

  cluster             = each.value.cluster
  trust_domain        = local.peers[each.value.peer].trust_domain
  bundle_endpoint_url = local.peers[each.value.peer].url
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = local.peers[each.value.peer].id
  }
  trust_domain_bundle = local.peers[each.value.peer].bundle
  wait_for_bundle     = true
  # The clusters are this test's own; a destroy after a failed step must not
  # wait for a stopped SPIRE server.
  delete_bundle_on_destroy = false
}

data "zerotrust_federation_status" "all" {
  %s
}

data "zerotrust_federation_status" "west" {
  cluster         = "fswest"
  check_endpoints = false
  %s
}
`, string(peersJSON), deps, deps)
}

// fsHealthy is a federations entry of a working federation.
func fsHealthy(cluster, td string) knownvalue.Check {
	return knownvalue.ObjectPartial(map[string]knownvalue.Check{
		"cluster":          knownvalue.StringExact(cluster),
		"trust_domain":     knownvalue.StringExact(td),
		"cftd_name":        knownvalue.StringExact(td),
		"relationship":     knownvalue.Bool(true),
		"bundle_held":      knownvalue.Bool(true),
		"x509_expires_at":  knownvalue.StringRegexp(regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)),
		"endpoint_ok":      knownvalue.Bool(true),
		"endpoint_matches": knownvalue.Bool(true),
		"problems":         knownvalue.ListExact([]knownvalue.Check{}),
	})
}

// fsLog logs an attribute a read reported (its problems, its graph), so the
// test's output shows what a check block or a README would show.
type fsLog struct {
	t             *testing.T
	address, attr string
}

func (c fsLog) CheckState(_ context.Context, req statecheck.CheckStateRequest, _ *statecheck.CheckStateResponse) {
	for _, r := range req.State.Values.RootModule.Resources {
		if r.Address == c.address {
			c.t.Logf("%s %s:\n%v", c.address, c.attr, r.AttributeValues[c.attr])
		}
	}
}

// fsMermaid is the graph of members, each federating with every other,
// every edge labelled as label says.
func fsMermaid(members []fsMember, label func(from, to fsMember) string) string {
	var b strings.Builder
	b.WriteString("flowchart LR\n  %% A --> B: A federates with (trusts) B; the label is the federation's health.\n")
	for i, m := range members {
		fmt.Fprintf(&b, "  c%d[\"%s<br/>%s\"]\n", i, m.name, m.spire.TrustDomain)
	}
	var styles []string
	for i, from := range members {
		for j, to := range members {
			if i == j {
				continue
			}
			fmt.Fprintf(&b, "  c%d -->|\"%s\"| c%d\n", i, label(from, to), j)
			styles = append(styles, fmt.Sprintf("  linkStyle %d stroke:#2da44e\n", len(styles)))
		}
	}
	b.WriteString(strings.Join(styles, ""))
	return b.String()
}

func fsProblem(pattern string) knownvalue.Check {
	return knownvalue.StringRegexp(regexp.MustCompile(pattern))
}

// TestAccFederationStatus federates three clusters, each with its own real
// SPIRE server and spire-controller-manager, and breaks the mesh twice:
//  1. healthy: six entries, each declared, known to SPIRE, bundled, and served
//     by its peer's endpoint; the scoped read lists fswest's two;
//  2. fseast's SPIRE server stopped: exactly four problems, fseast's own two
//     entries (SPIRE cannot be asked) and the two peers' checks of fseast's
//     endpoint;
//  3. fseast restarted, fswest's ClusterFederatedTrustDomain for fsnorth
//     deleted out of band: spire-controller-manager drops the relationship,
//     SPIRE keeps the bundle, and that is the one problem.
func TestAccFederationStatus(t *testing.T) {
	t.Parallel()
	names := []string{"fseast", "fsnorth", "fswest"}
	members := make([]fsMember, len(names))
	for i, n := range names {
		members[i] = fsMember{name: n, c: acctest.OwnCluster(t, n)}
	}
	for i, n := range names {
		members[i].spire = acctest.Spire(t, n)
	}
	east, north, west := members[0], members[1], members[2]
	t.Cleanup(func() {
		if east.spire.ServerPID() == 0 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := east.spire.StartServer(ctx); err != nil {
				t.Error(err)
			}
		}
	})
	td := func(m fsMember) string { return m.spire.TrustDomain }
	all := "data.zerotrust_federation_status.all"
	endpointDown := func(cluster string) knownvalue.Check {
		return fsProblem(`^` + cluster + `: fseast\.zt\.test: the bundle endpoint ` + regexp.QuoteMeta(east.spire.BundleEndpointURL) +
			` \(https_spiffe, spiffe://fseast\.zt\.test/spire/server\) does not answer`)
	}
	cannotAsk := func(peer string) knownvalue.Check {
		return fsProblem(`^fseast: ` + regexp.QuoteMeta(peer) + `: cannot ask the SPIRE server \(pod ` +
			regexp.QuoteMeta(east.spire.Namespace+"/"+east.spire.PodName) + `, container spire-server\): .*federation list`)
	}

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             fsCheckNoCFTDs(t, members),
		Steps: []resource.TestStep{
			{
				Config: acctest.ProviderConfigFor(t, east.c, north.c, west.c) + `
data "zerotrust_federation_status" "nope" {
  cluster = "nope"
}
`,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Unknown Cluster`),
			},
			{
				Config: fsConfig(t, members, true),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(all, tfjsonpath.New("ok"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(all, tfjsonpath.New("problems"), knownvalue.ListExact([]knownvalue.Check{})),
					statecheck.ExpectKnownValue(all, tfjsonpath.New("check_endpoints"), knownvalue.Bool(true)),
					fsLog{t, all, "mermaid"},
					statecheck.ExpectKnownValue(all, tfjsonpath.New("mermaid"), knownvalue.StringExact(
						fsMermaid(members, func(fsMember, fsMember) string { return "ok" }))),
					statecheck.ExpectKnownValue(all, tfjsonpath.New("federations"), knownvalue.ListExact([]knownvalue.Check{
						fsHealthy("fseast", td(north)), fsHealthy("fseast", td(west)),
						fsHealthy("fsnorth", td(east)), fsHealthy("fsnorth", td(west)),
						fsHealthy("fswest", td(east)), fsHealthy("fswest", td(north)),
					})),
					statecheck.ExpectKnownValue("data.zerotrust_federation_status.west", tfjsonpath.New("federations"),
						knownvalue.ListExact([]knownvalue.Check{
							knownvalue.ObjectPartial(map[string]knownvalue.Check{"trust_domain": knownvalue.StringExact(td(east)),
								"bundle_held": knownvalue.Bool(true), "endpoint_ok": knownvalue.Null(), "endpoint_matches": knownvalue.Null()}),
							knownvalue.ObjectPartial(map[string]knownvalue.Check{"trust_domain": knownvalue.StringExact(td(north)),
								"bundle_held": knownvalue.Bool(true), "endpoint_ok": knownvalue.Null(), "endpoint_matches": knownvalue.Null()}),
						})),
					statecheck.ExpectKnownValue("data.zerotrust_federation_status.west", tfjsonpath.New("ok"), knownvalue.Bool(true)),
				},
			},
			{
				// Workloads: fseast's ClusterSPIFFEID "fed" federates with a
				// peer SPIRE holds the bundle of, "ghost" also with a trust
				// domain nobody federates, so SPIRE would refuse its entries.
				PreConfig: func() {
					ctx := context.Background()
					for name, with := range map[string][]string{"fed": {td(north)}, "ghost": {td(west), "ghost.zt.test"}} {
						if err := east.spire.ApplyClusterSPIFFEID(ctx, harness.ClusterSPIFFEIDOptions{
							Name: name, SPIFFEIDTemplate: "spiffe://{{ .TrustDomain }}/" + name, PodLabels: map[string]string{"app": name},
							FederatesWith: with,
						}); err != nil {
							t.Fatal(err)
						}
					}
				},
				Config: fsConfig(t, members, false),
				ConfigStateChecks: []statecheck.StateCheck{
					fsLog{t, all, "problems"},
					statecheck.ExpectKnownValue(all, tfjsonpath.New("ok"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(all, tfjsonpath.New("problems"), knownvalue.ListExact([]knownvalue.Check{
						fsProblem(`^fseast: ClusterSPIFFEID ghost: the SPIRE server holds no bundle of "ghost\.zt\.test"`),
					})),
					statecheck.ExpectKnownValue(all, tfjsonpath.New("workloads"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.ObjectExact(map[string]knownvalue.Check{
							"cluster": knownvalue.StringExact("fseast"), "name": knownvalue.StringExact("fed"),
							"federates_with": knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(td(north))}),
							"problems":       knownvalue.ListExact([]knownvalue.Check{}),
						}),
						knownvalue.ObjectPartial(map[string]knownvalue.Check{
							"cluster": knownvalue.StringExact("fseast"), "name": knownvalue.StringExact("ghost"),
							"federates_with": knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(td(west)), knownvalue.StringExact("ghost.zt.test")}),
						}),
					})),
				},
			},
			{
				PreConfig: func() {
					for _, name := range []string{"fed", "ghost"} {
						if err := fsDynamic(t, east.c).Resource(harness.ClusterSPIFFEIDResource).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
							t.Fatal(err)
						}
					}
					if err := east.spire.StopServer(); err != nil {
						t.Fatal(err)
					}
				},
				Config: fsConfig(t, members, false),
				ConfigStateChecks: []statecheck.StateCheck{
					fsLog{t, all, "problems"},
					statecheck.ExpectKnownValue(all, tfjsonpath.New("ok"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(all, tfjsonpath.New("problems"), knownvalue.ListExact([]knownvalue.Check{
						cannotAsk(td(north)), cannotAsk(td(west)), endpointDown("fsnorth"), endpointDown("fswest"),
					})),
					// fseast's SPIRE server cannot say its trust domain, so the
					// peers' edges point at the trust domain alone.
					fsLog{t, all, "mermaid"},
					statecheck.ExpectKnownValue(all, tfjsonpath.New("mermaid"), knownvalue.StringRegexp(regexp.MustCompile(
						`(?s)  c0\["fseast"\]\n.*  c0 -->\|"SPIRE not asked"\| c1\n.*  t0\(\["fseast\.zt\.test"\]\)\n  c1 -->\|"endpoint down"\| t0\n`+
							`.*  c2 -->\|"endpoint down"\| t0\n.*  linkStyle 0 stroke:#8c959f`))),
					// fseast's own entries: SPIRE unknown, the peers' endpoints
					// checked with the objects' bootstrap bundles.
					statecheck.ExpectKnownValue(all, tfjsonpath.New("federations").AtSliceIndex(0), knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"cluster": knownvalue.StringExact("fseast"), "relationship": knownvalue.Null(), "bundle_held": knownvalue.Null(),
						"endpoint_ok": knownvalue.Bool(true), "endpoint_matches": knownvalue.Null(),
					})),
					statecheck.ExpectKnownValue(all, tfjsonpath.New("federations").AtSliceIndex(2), knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"cluster": knownvalue.StringExact("fsnorth"), "trust_domain": knownvalue.StringExact(td(east)),
						"relationship": knownvalue.Bool(true), "bundle_held": knownvalue.Bool(true), "endpoint_ok": knownvalue.Bool(false),
					})),
				},
			},
			{
				PreConfig: func() {
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					if err := east.spire.StartServer(ctx); err != nil {
						t.Fatal(err)
					}
					fsDeleteCFTD(ctx, t, west, td(north))
				},
				Config: fsConfig(t, members, false),
				ConfigStateChecks: []statecheck.StateCheck{
					fsLog{t, all, "problems"},
					statecheck.ExpectKnownValue(all, tfjsonpath.New("problems"), knownvalue.ListExact([]knownvalue.Check{
						fsProblem(`^fswest: fsnorth\.zt\.test: SPIRE still holds the bundle although no federation relationship or ` +
							`ClusterFederatedTrustDomain declares it`),
					})),
					statecheck.ExpectKnownValue(all, tfjsonpath.New("federations").AtSliceIndex(5), knownvalue.ObjectPartial(map[string]knownvalue.Check{
						"cluster": knownvalue.StringExact("fswest"), "trust_domain": knownvalue.StringExact(td(north)),
						"cftd_name": knownvalue.Null(), "relationship": knownvalue.Bool(false), "bundle_held": knownvalue.Bool(true),
						"endpoint_ok": knownvalue.Null(),
					})),
				},
			},
			{
				// Destroy through the configuration: terraform-plugin-testing's
				// own destroy reads state through a shim that cannot address
				// for_each instances.
				Config: acctest.ProviderConfigFor(t, east.c, north.c, west.c),
			},
		},
	})
}

func fsDynamic(t *testing.T, c *harness.Cluster) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// fsDeleteCFTD deletes m's ClusterFederatedTrustDomain for td as another
// client would, and waits until spire-controller-manager has removed the
// federation relationship from SPIRE.
func fsDeleteCFTD(ctx context.Context, t *testing.T, m fsMember, td string) {
	t.Helper()
	err := fsDynamic(t, m.c).Resource(kube.ClusterFederatedTrustDomain.GVR()).Delete(ctx, td, metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err := m.spire.CLI(ctx, "federation", "show", "-trustDomain", td)
		if err != nil && strings.Contains(err.Error(), "NotFound") {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: SPIRE still has the federation relationship with %s after its ClusterFederatedTrustDomain was deleted: %v", m.name, td, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func fsCheckNoCFTDs(t *testing.T, members []fsMember) resource.TestCheckFunc {
	return func(*terraform.State) error {
		for _, m := range members {
			list, err := fsDynamic(t, m.c).Resource(kube.ClusterFederatedTrustDomain.GVR()).List(context.Background(), metav1.ListOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
			if err == nil && len(list.Items) > 0 {
				return fmt.Errorf("%s: %d ClusterFederatedTrustDomains left after destroy", m.name, len(list.Items))
			}
		}
		return nil
	}
}
