package leastprivilege_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/rbac"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// mixedMeshApp labels the pods the example's ClusterSPIFFEIDs select.
const mixedMeshApp = "lp-member"

// TestAccLeastPrivilegeMixedMesh applies examples/n-cluster-mesh, with its
// `workloads` set, to a mixed fleet: lpeast's SPIRE laid out as the
// OpenShift operator does, lpwest's and lpnorth's as the SPIFFE Helm chart
// does (spire_install = "helm"). On every cluster the provider's only
// credential is the token of the ServiceAccount that the committed manifest
// of the cluster's install creates and binds, applied unchanged:
// examples/rbac/operator.yaml on lpeast (the cluster-wide role, and
// zerotrust-spire in the operator's namespace), examples/rbac/helm-chart.yaml
// on the chart's clusters (zerotrust-spire in spire-server,
// zerotrust-spire-bundle in spire-system). The one
// apply says no word of a missing permission; after it every SPIRE server
// holds every peer's bundle, the pod workload of every cluster completes an
// mTLS handshake with every other one (each ordered pair), and the next
// plan changes nothing (it reads only the example's check) and passes the
// example's federation check.
func TestAccLeastPrivilegeMixedMesh(t *testing.T) {
	names := []string{"lpeast", "lpwest", "lpnorth"}
	helm := []string{"lpwest", "lpnorth"}
	ctx := context.Background()
	var spires []*harness.Spire
	var tds []string
	vars := map[string]any{}
	for _, n := range names {
		var s *harness.Spire
		file := rbac.OperatorFile
		if slices.Contains(helm, n) {
			s = acctest.HelmSpire(t, n)
			file = rbac.HelmFile
		} else {
			acctest.OwnCluster(t, n)
			s = acctest.Spire(t, n)
		}
		c := s.Cluster
		start := time.Now()
		kubeconfig, err := c.ManifestKubeconfig(ctx, readFiles(t, file)...)
		if err != nil {
			t.Fatalf("applying %s as shipped to %s: %v", file.Path, n, err)
		}
		t.Logf("%s applied unchanged to %s in %s", file.Path, n, time.Since(start).Round(time.Millisecond))
		v := map[string]any{"config_path": kubeconfig, "config_context": c.Name, "bundle_endpoint_url": s.BundleEndpointURL}
		if slices.Contains(helm, n) {
			v["spire_install"] = "helm"
		}
		vars[n] = v
		spires = append(spires, s)
		tds = append(tds, s.TrustDomain)
	}
	workloads := startMixedMeshWorkloads(ctx, t, spires, tds)

	e := &env{reattach: acctest.ServeProvider(t)}
	dir := t.TempDir()
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "n-cluster-mesh", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	tfvars, err := json.Marshal(map[string]any{"clusters": vars, "workloads": map[string]any{"pod_labels": map[string]string{"app": mixedMeshApp}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"main.tf": example, "terraform.tfvars.json": tfvars} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	acctest.MustTerraform(t, "terraform", dir, e.reattach, "init")
	destroyed := false
	t.Cleanup(func() {
		if !destroyed {
			if out, code := e.tf(t, dir, "destroy", "-auto-approve"); code != 0 {
				t.Errorf("cleanup: terraform destroy exited %d:\n%s", code, out)
			}
		}
	})

	start := time.Now()
	e.mustTF(t, dir, "apply", "-auto-approve")
	t.Logf("apply of the mixed mesh with ServiceAccount tokens: %s", time.Since(start).Round(time.Millisecond))
	for i, s := range spires {
		held, err := s.FederatedTrustDomains(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, td := range tds {
			if td != s.TrustDomain && !slices.Contains(held, td) {
				t.Errorf("SPIRE of %s holds the bundles of %v after the apply, not %s", names[i], held, td)
			}
		}
	}
	expectHandshakes(ctx, t, workloads)
	e.planChangesNothing(t, dir)
	e.mustTF(t, dir, "destroy", "-auto-approve")
	destroyed = true
}

// startMixedMeshWorkloads starts on each server a k8s_psat agent and a pod
// workload labelled app=mixedMeshApp that accepts the workloads of every
// other trust domain in tds; each serves once the example's ClusterSPIFFEID
// gives it its identity.
func startMixedMeshWorkloads(ctx context.Context, t *testing.T, spires []*harness.Spire, tds []string) []*harness.Workload {
	t.Helper()
	var workloads []*harness.Workload
	for _, s := range spires {
		a, err := harness.StartSpireAgentWith(ctx, s, harness.SpireAgentOptions{Name: "member", K8sPSAT: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = a.Stop() })
		var allow []string
		for _, td := range tds {
			if td != s.TrustDomain {
				allow = append(allow, "spiffe://"+td)
			}
		}
		w, err := harness.StartPodWorkload(ctx, a, harness.PodWorkloadOptions{
			Namespace: "members", Pod: "member-0", ServiceAccount: "member", Labels: map[string]string{"app": mixedMeshApp},
			Allow: allow, SPIFFEID: "spiffe://" + s.TrustDomain + "/ns/members/sa/member", ReadyTimeout: 15 * time.Minute,
			ServeLater: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Stop() })
		workloads = append(workloads, w)
	}
	return workloads
}

// expectHandshakes fails the test unless every ordered pair of workloads
// completes an mTLS handshake within 90 s, checked concurrently.
func expectHandshakes(ctx context.Context, t *testing.T, workloads []*harness.Workload) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, from := range workloads {
		for _, to := range workloads {
			if from == to {
				continue
			}
			wg.Go(func() {
				detail, err := harness.WaitMTLS(ctx, from, to, true, 90*time.Second)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
				t.Logf("%s -> %s: %s", from.SPIFFEID, to.SPIFFEID, detail)
			})
		}
	}
	wg.Wait()
}

// planChangesNothing fails the test unless a plan in dir changes no
// resource and says no word of a missing permission. Unlike emptyPlan it
// accepts the read of a check block's data source, which Terraform plans on
// every run (the example's federation_healthy check).
func (e *env) planChangesNothing(t *testing.T, dir string) {
	t.Helper()
	out := e.mustTF(t, dir, "plan", "-out=next.tfplan")
	if strings.Contains(out, "Check block assertion failed") {
		t.Errorf("the plan after the apply fails the example's check:\n%s", out)
	}
	var plan struct {
		ResourceChanges []struct {
			Address      string `json:"address"`
			ActionReason string `json:"action_reason"`
			Change       struct {
				Actions []string `json:"actions"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(e.mustTF(t, dir, "show", "-json", "next.tfplan")), &plan); err != nil {
		t.Fatalf("show -json of the plan: %v", err)
	}
	for _, rc := range plan.ResourceChanges {
		actions := strings.Join(rc.Change.Actions, ",")
		if actions != "no-op" && (actions != "read" || rc.ActionReason != "read_because_check_nested") {
			t.Errorf("the plan after the apply changes %s: %s (%s)", rc.Address, actions, rc.ActionReason)
		}
	}
}
