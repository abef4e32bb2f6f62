package examplestest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	tfstate "github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// meshExampleConfig is examples/n-cluster-mesh/main.tf as written, minus its
// terraform block (see exampleWithout). Its check block stays: its data
// source sits outside it and is read at plan time once nothing it depends
// on changes, so terraform-plugin-testing's empty-plan checks hold with it.
// Its provider block, variable and everything else stay: the test feeds it
// var.clusters like a user would.
func meshExampleConfig(t *testing.T) string {
	t.Helper()
	return exampleWithout(t, "n-cluster-mesh")
}

// meshMember is one cluster of the mesh with its SPIRE server, and how the
// example's var.clusters reaches it.
type meshMember struct {
	cluster *harness.Cluster
	spire   *harness.Spire
	// byToken reaches the cluster through host + token + CA instead of a
	// kubeconfig, so both shapes of a var.clusters entry are applied.
	byToken bool
}

// variable is m's entry of var.clusters. The bundle endpoint URL is given
// there, as `make demo` gives it: with the operator's released SpireServer
// CRD the cluster publishes it only through an OpenShift Route, which these
// clusters do not serve.
func (m meshMember) variable() config.Variable {
	entry := map[string]config.Variable{
		"config_path":    config.StringVariable(m.cluster.Kubeconfig),
		"config_context": config.StringVariable(m.cluster.Name),
	}
	if m.byToken {
		entry = map[string]config.Variable{
			"host":                   config.StringVariable(m.cluster.Host),
			"token":                  config.StringVariable(m.cluster.Token),
			"cluster_ca_certificate": config.StringVariable(string(m.cluster.CACertPEM)),
		}
	}
	entry["bundle_endpoint_url"] = config.StringVariable(m.spire.BundleEndpointURL)
	return config.ObjectVariable(entry)
}

func meshVariables(members []meshMember) config.Variables {
	clusters := map[string]config.Variable{}
	for _, m := range members {
		clusters[m.cluster.Name] = m.variable()
	}
	return config.Variables{"clusters": config.MapVariable(clusters)}
}

// TestAccExampleNClusterMesh applies examples/n-cluster-mesh to clusters of
// its own, each with a real SPIRE server and spire-controller-manager, and
// asks the SPIRE servers (not Terraform state) what they hold:
//   - one apply on three clusters bootstraps the full mesh, and because the
//     example sets wait_for_bundle, every server holds every peer's bundle
//     when the apply returns (asked at once, no grace period), having been
//     asked through pod exec of spire-server-0 (the exec endpoints' logs);
//   - a fourth cluster is one more map entry: the plan creates exactly its
//     2*3 ClusterFederatedTrustDomains and changes nothing else, and after the
//     apply every server holds every peer's bundle;
//   - after a CA rotation on one server, whose new bundle the data sources
//     read, the plan is empty: the bundle is bootstrap input only;
//   - removing the federations removes the peers' bundles from SPIRE too
//     (delete_bundle_on_destroy, through pod exec).
func TestAccExampleNClusterMesh(t *testing.T) {
	// Starting four clusters with SPIRE takes a while: do it after pausing,
	// so the package's serial tests are not held up (hence t.Parallel and
	// resource.Test rather than resource.ParallelTest). The clusters are the
	// test's own, stopped with their SPIRE servers when it ends.
	t.Parallel()
	names := []string{"mesh1", "mesh2", "mesh3", "mesh4"}
	start := time.Now()
	members := make([]meshMember, len(names))
	for i, name := range names {
		members[i] = meshMember{cluster: acctest.OwnCluster(t, name), spire: acctest.Spire(t, name), byToken: name == "mesh4"}
	}
	t.Logf("4 clusters with SPIRE and spire-controller-manager ready in %v", time.Since(start).Round(time.Millisecond))
	three, four := members[:3], members
	rotated := members[0]
	example := meshExampleConfig(t)
	clusters := make([]*harness.Cluster, len(members))
	for i, m := range members {
		clusters[i] = m.cluster
	}

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkNoCFTDs(members),
		Steps: []resource.TestStep{
			{
				// (a) One apply federates three clusters both ways.
				Config:          example,
				ConfigVariables: meshVariables(three),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{expectMeshCreates(nil, three)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.ClusterCheck(checkSpireHoldsPeers(three)),
					acctest.ClusterCheck(checkAskedThroughExec(three)),
					statecheck.ExpectKnownOutputValue("federations", meshFederationsValue(three)),
					statecheck.ExpectKnownOutputValue("bundle_endpoints", knownvalue.MapExact(map[string]knownvalue.Check{
						"mesh1": knownvalue.StringExact(members[0].spire.BundleEndpointURL),
						"mesh2": knownvalue.StringExact(members[1].spire.BundleEndpointURL),
						"mesh3": knownvalue.StringExact(members[2].spire.BundleEndpointURL),
					})),
					statecheck.ExpectKnownOutputValue("config_map_bundles_current", meshAllTrue(three)),
				},
			},
			{
				// (b) A fourth cluster is one more map entry: exactly its
				// 2*3 objects are created, nothing else changes.
				Config:          example,
				ConfigVariables: meshVariables(four),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{expectMeshCreates(three, four)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.ClusterCheck(checkSpireHoldsPeers(four)),
					acctest.ClusterCheck(checkAskedThroughExec(four)),
					statecheck.ExpectKnownOutputValue("federations", meshFederationsValue(four)),
				},
			},
			{
				// (c) A rotated CA changes the bundle the data sources read,
				// and the plan stays empty.
				PreConfig:       func() { rotateAndWaitForConfigMap(t, rotated) },
				Config:          example,
				ConfigVariables: meshVariables(four),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					// Proof that the data source saw the rotation: two CAs now.
					statecheck.ExpectKnownValue(fmt.Sprintf("data.zerotrust_trust_bundle.this[%q]", rotated.cluster.Name),
						tfjsonpath.New("x509_fingerprints_sha256"), knownvalue.ListSizeExact(2)),
					// ... and so did the one asking SPIRE itself through pod exec.
					statecheck.ExpectKnownValue(fmt.Sprintf("data.zerotrust_trust_bundle.from_spire[%q]", rotated.cluster.Name),
						tfjsonpath.New("x509_fingerprints_sha256"), knownvalue.ListSizeExact(2)),
					statecheck.ExpectKnownOutputValue("config_map_bundles_current", meshAllTrue(four)),
					acctest.ClusterCheck(checkSpireHoldsPeers(four)),
				},
			},
			{
				// Remove the for_each instances through the configuration:
				// terraform-plugin-testing's own destroy reads state through a
				// shim that cannot address them.
				Config: acctest.ProviderConfigFor(t, clusters...),
				ConfigStateChecks: []statecheck.StateCheck{
					acctest.ClusterCheck(checkNoCFTDs(members)),
					// delete_bundle_on_destroy: without it SPIRE would keep them.
					acctest.ClusterCheck(checkSpireHoldsPeers(nil, members...)),
				},
			},
		},
	})
}

// meshPairs are the instance keys of zerotrust_federated_trust_domain.peer
// for members: every ordered pair "<cluster>-><peer>".
func meshPairs(members []meshMember) []string {
	var keys []string
	for _, a := range members {
		for _, b := range members {
			if a.cluster != b.cluster {
				keys = append(keys, fmt.Sprintf("zerotrust_federated_trust_domain.peer[%q]", a.cluster.Name+"->"+b.cluster.Name))
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// meshCreates checks that a plan creates exactly the federated trust domains
// that members have and before lacks, and changes nothing else; the data
// sources of the new clusters are read (at plan time, or at apply when they
// cannot be read before).
type meshCreates struct{ before, after []meshMember }

func expectMeshCreates(before, after []meshMember) plancheck.PlanCheck {
	return meshCreates{before: before, after: after}
}

func (c meshCreates) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	want := slices.DeleteFunc(meshPairs(c.after), func(k string) bool { return slices.Contains(meshPairs(c.before), k) })
	var creates, others []string
	read := map[string]bool{}
	for _, rc := range req.Plan.ResourceChanges {
		a := rc.Change.Actions
		switch {
		case a.NoOp():
		case a.Create() && rc.Type == "zerotrust_federated_trust_domain":
			creates = append(creates, rc.Address)
		case a.Read() && rc.Mode == tfjson.DataResourceMode:
			read[rc.Address] = true
		default:
			others = append(others, fmt.Sprintf("%s: %v", rc.Address, a))
		}
	}
	if req.Plan.PriorState != nil && req.Plan.PriorState.Values != nil {
		for _, r := range req.Plan.PriorState.Values.RootModule.Resources {
			if r.Mode == tfjson.DataResourceMode {
				read[r.Address] = true
			}
		}
	}
	sort.Strings(creates)
	var errs []string
	if !slices.Equal(creates, want) {
		errs = append(errs, fmt.Sprintf("creates %d federated trust domains %v, want exactly %d: %v", len(creates), creates, len(want), want))
	}
	if len(others) > 0 {
		errs = append(errs, fmt.Sprintf("other changes, want none: %v", others))
	}
	for _, m := range c.after {
		for _, ds := range []string{"zerotrust_spire_server", "zerotrust_trust_bundle"} {
			if addr := fmt.Sprintf("data.%s.this[%q]", ds, m.cluster.Name); !read[addr] {
				errs = append(errs, addr+" was not read")
			}
		}
	}
	if len(errs) > 0 {
		resp.Error = fmt.Errorf("plan: %s", strings.Join(errs, "; "))
	}
}

// meshFederationsValue is the example's "federations" output for members:
// each cluster federates with every other member's trust domain.
func meshFederationsValue(members []meshMember) knownvalue.Check {
	out := map[string]knownvalue.Check{}
	for _, m := range members {
		out[m.cluster.Name] = knownvalue.ListExact(acctest.StringChecks(memberPeers(members, m)...))
	}
	return knownvalue.MapExact(out)
}

// memberPeers are the trust domains self federates with: those of every
// other member, sorted (self is one of members).
func memberPeers(members []meshMember, self meshMember) []string {
	spires := make([]*harness.Spire, len(members))
	for i, m := range members {
		spires[i] = m.spire
	}
	return peerTrustDomains(spires, slices.IndexFunc(members, func(m meshMember) bool { return m.cluster == self.cluster }))
}

// checkSpireHoldsPeers asks the SPIRE server (`spire-server bundle list`) of
// every member, and of every one of others, whether it holds exactly the
// bundles of the other members (others: none). It asks once, without waiting:
// the example's wait_for_bundle (and delete_bundle_on_destroy) mean the apply
// returns only when SPIRE holds (or no longer holds) them, though
// spire-controller-manager works asynchronously.
func checkSpireHoldsPeers(members []meshMember, others ...meshMember) resource.TestCheckFunc {
	return func(*tfstate.State) error {
		ctx := context.Background()
		for _, m := range append(slices.Clone(members), others...) {
			want := []string{}
			if slices.ContainsFunc(members, func(x meshMember) bool { return x.cluster == m.cluster }) {
				want = memberPeers(members, m)
			}
			got, err := m.spire.FederatedTrustDomains(ctx)
			if err != nil || !slices.Equal(got, want) {
				return fmt.Errorf("SPIRE %s holds the bundles of %v (%v) right after the apply, want %v; last lines of %s:\n%s",
					m.spire.TrustDomain, got, err, want,
					m.spire.ControllerManagerLogPath(), meshLogTail(m.spire.ControllerManagerLogPath(), 15))
			}
		}
		return nil
	}
}

// checkAskedThroughExec reads every member's exec endpoint log: the example's
// data source with spire_server = {} asked `spire-server bundle show`, and
// wait_for_bundle polled `spire-server bundle list -id spiffe://<peer>` for
// every peer, through pod exec of spire-server-0 via the API server.
func checkAskedThroughExec(members []meshMember) resource.TestCheckFunc {
	return func(*tfstate.State) error {
		for _, m := range members {
			data, err := os.ReadFile(m.spire.ExecLogPath())
			if err != nil {
				return fmt.Errorf("%s: %w", m.cluster.Name, err)
			}
			want := []string{`exec ["spire-server" "bundle" "show" "-format" "spiffe"]: ok`}
			for _, td := range memberPeers(members, m) {
				want = append(want, fmt.Sprintf(`exec ["spire-server" "bundle" "list" "-id" "spiffe://%s"]: ok`, td))
			}
			for _, w := range want {
				if !strings.Contains(string(data), w) {
					return fmt.Errorf("%s: the exec endpoint log %s has no %q; last lines:\n%s",
						m.cluster.Name, m.spire.ExecLogPath(), w, meshLogTail(m.spire.ExecLogPath(), 15))
				}
			}
		}
		return nil
	}
}

// meshAllTrue is a map output with true for every member.
func meshAllTrue(members []meshMember) knownvalue.Check {
	out := map[string]knownvalue.Check{}
	for _, m := range members {
		out[m.cluster.Name] = knownvalue.Bool(true)
	}
	return knownvalue.MapExact(out)
}

func meshLogTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// checkNoCFTDs asks every member's API server that no
// ClusterFederatedTrustDomain is left (the mesh clusters are this test's own).
func checkNoCFTDs(members []meshMember) resource.TestCheckFunc {
	return func(*tfstate.State) error {
		for _, m := range members {
			d, err := dynamic.NewForConfig(m.cluster.RESTConfig())
			if err != nil {
				return err
			}
			list, err := d.Resource(kube.ClusterFederatedTrustDomain.GVR()).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return fmt.Errorf("%s: list ClusterFederatedTrustDomains: %w", m.cluster.Name, err)
			}
			if len(list.Items) > 0 {
				names := make([]string, len(list.Items))
				for i, item := range list.Items {
					names[i] = item.GetName()
				}
				return fmt.Errorf("%s: ClusterFederatedTrustDomains left after destroy: %v", m.cluster.Name, names)
			}
		}
		return nil
	}
}

// rotateAndWaitForConfigMap rotates the X.509 CA of m's SPIRE server and
// waits until the bundle ConfigMap (what the example's data source reads)
// holds both the old and the new CA.
func rotateAndWaitForConfigMap(t *testing.T, m meshMember) {
	t.Helper()
	ctx := context.Background()
	if err := m.spire.RotateX509CA(ctx); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(m.cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	td := spiffeid.RequireTrustDomainFromString(m.spire.TrustDomain)
	deadline := time.Now().Add(30 * time.Second)
	for {
		cm, err := cs.CoreV1().ConfigMaps(m.spire.BundleNamespace).Get(ctx, m.spire.BundleConfigMap, metav1.GetOptions{})
		if err == nil {
			if b, err := trustbundle.ParsePEM(td, []byte(cm.Data["bundle.crt"])); err == nil && len(b.X509Authorities()) == 2 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: ConfigMap %s/%s did not get the rotated CA within 30s (%v)", m.cluster.Name,
				m.spire.BundleNamespace, m.spire.BundleConfigMap, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
