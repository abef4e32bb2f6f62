package examplestest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// runbookManager is the field manager of the objects the manual runbook
// writes (kubectl apply --server-side would use "kubectl").
const runbookManager = "runbook"

// TestAccExampleAdoptFederation is the adoption story of
// examples/adopt-federation on four clusters of its own with real SPIRE
// servers and spire-controller-manager: three clusters are federated the
// manual way (a SpireServer bundle endpoint and ClusterFederatedTrustDomains
// written by another field manager, peers' bundles put into SPIRE with
// `spire-server bundle set`); one `terraform query -generate-config-out`
// plus one `terraform apply` adopt every object without changing any; the
// next plan is empty; then one more map entry federates a fourth cluster,
// whose SPIRE is laid out as the SPIFFE Helm chart does (spire_install =
// "helm": no SpireServer, so no zerotrust_spire_federation), with the three,
// and every SPIRE server confirms every peer's bundle.
func TestAccExampleAdoptFederation(t *testing.T) {
	names := []string{"adopteast", "adoptwest", "adoptnorth", "adoptsouth"}
	adopted := 3
	clusters := make([]*harness.Cluster, len(names))
	spires := make([]*harness.Spire, len(names))
	for i, n := range names {
		if i < adopted {
			clusters[i] = acctest.OwnCluster(t, n)
			spires[i] = acctest.Spire(t, n)
		} else {
			spires[i] = acctest.HelmSpire(t, n)
			clusters[i] = spires[i].Cluster
		}
	}
	ctx := context.Background()

	// The runbook, on the first three clusters.
	versions := map[string]string{}
	for i := range adopted {
		runbookFederate(ctx, t, clusters[i], spires, i, adopted)
	}
	waitFederated(ctx, t, spires[:adopted])
	for i := range adopted {
		for _, key := range runbookObjects(ctx, t, clusters[i]) {
			versions[clusters[i].Name+"/"+key.name] = key.version
		}
	}

	dir := filepath.Join(copyExamples(t, "adopt-federation"), "adopt-federation")
	writeVars := func(n int) {
		t.Helper()
		cs := map[string]any{}
		for i := range n {
			entry := map[string]string{
				"config_path": clusters[i].Kubeconfig, "config_context": names[i],
				"bundle_endpoint_url": spires[i].BundleEndpointURL,
			}
			if install := spireInstall(spires[i]); install != "" {
				entry["spire_install"] = install
			}
			cs[names[i]] = entry
		}
		data, err := json.Marshal(map[string]any{"clusters": cs, "adopted": names[:adopted]})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "terraform.tfvars.json"), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeVars(adopted)

	// One query writes configuration and import blocks for what runs.
	out := mustTerraform(t, dir, "query", "-generate-config-out=adopted.tf", "-no-color")
	generated, err := os.ReadFile(filepath.Join(dir, "adopted.tf"))
	if err != nil {
		t.Fatalf("terraform query wrote no adopted.tf: %v\n%s", err, out)
	}
	gen := string(generated)
	for kind, want := range map[string]int{"zerotrust_spire_federation": adopted, "zerotrust_federated_trust_domain": adopted * (adopted - 1)} {
		if got := len(regexp.MustCompile(`(?m)^resource "`+kind+`"`).FindAllString(gen, -1)); got != want {
			t.Errorf("adopted.tf has %d %s resource blocks, want %d:\n%s", got, kind, want, gen)
		}
		if got := len(regexp.MustCompile(`(?m)^\s*to\s*=\s*`+kind+`\.`).FindAllString(gen, -1)); got != want {
			t.Errorf("adopted.tf has %d import blocks for %s, want %d:\n%s", got, kind, want, gen)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	destroyed := false
	t.Cleanup(func() {
		if !destroyed {
			if out, code := terraform(t, dir, "destroy", "-auto-approve", "-no-color"); code != 0 {
				t.Errorf("cleanup: terraform destroy exited %d:\n%s", code, out)
			}
		}
	})

	// One apply imports everything and changes nothing.
	out = mustTerraform(t, dir, "apply", "-auto-approve", "-no-color")
	total := adopted + adopted*(adopted-1)
	if want := regexp.MustCompile(`Apply complete! Resources: ` + strconv.Itoa(total) + ` imported, 0 added, 0 changed, 0 destroyed`); !want.MatchString(out) {
		t.Fatalf("adoption apply did not import exactly %d objects and change nothing:\n%s", total, out)
	}
	for i := range adopted {
		for _, key := range runbookObjects(ctx, t, clusters[i]) {
			if was := versions[clusters[i].Name+"/"+key.name]; was != key.version {
				t.Errorf("adoption changed %s on %s (resourceVersion %s -> %s)", key.name, clusters[i].Name, was, key.version)
			}
		}
	}
	if out, code := terraform(t, dir, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Fatalf("plan after adoption is not empty (exit %d):\n%s", code, out)
	}

	// Growing the mesh is one more map entry: a chart cluster, which has no
	// SpireServer, so the example makes no zerotrust_spire_federation for
	// it; the adopted clusters' are imported, never written, so their
	// objects stay as the runbook left them.
	writeVars(len(names))
	start := time.Now()
	out = mustTerraform(t, dir, "apply", "-auto-approve", "-no-color")
	t.Logf("apply growing the adopted mesh by a chart cluster: %v", time.Since(start).Round(time.Millisecond))
	grown := 2 * adopted // 3 objects on the new cluster, 3 on the others
	if !strings.Contains(out, "Resources: 0 imported, "+strconv.Itoa(grown)+" added, 0 changed, 0 destroyed") &&
		!strings.Contains(out, "Resources: "+strconv.Itoa(grown)+" added, 0 changed, 0 destroyed") {
		t.Errorf("growing by one cluster did not add exactly %d objects:\n%s", grown, out)
	}
	waitFederated(ctx, t, spires)
	if out, code := terraform(t, dir, "plan", "-detailed-exitcode", "-no-color"); code != 0 {
		t.Fatalf("plan after growing is not empty (exit %d):\n%s", code, out)
	}
	t.Logf("plan -detailed-exitcode after growing: exit 0")

	mustTerraform(t, dir, "destroy", "-auto-approve", "-no-color")
	destroyed = true
	for _, c := range clusters {
		if left := cftdNames(t, c); len(left) != 0 {
			t.Errorf("destroy left ClusterFederatedTrustDomains on %s: %v", c.Name, left)
		}
	}
}

// runbookFederate does by hand what the provider automates, for cluster i
// and its peers among the first n: the SpireServer's bundle endpoint, a
// ClusterFederatedTrustDomain per peer bootstrapped with the peer's bundle,
// and the bundle put into SPIRE with `bundle set`. No peer is in the
// SpireServer's federatesWith too: SPIRE would follow that entry instead of
// the ClusterFederatedTrustDomain, and the adopted configuration's plan is
// refused when it declares both.
func runbookFederate(ctx context.Context, t *testing.T, c *harness.Cluster, spires []*harness.Spire, i, n int) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	for j := range n {
		if j == i {
			continue
		}
		p := spires[j]
		bundle, err := p.BundleShow(ctx, "spiffe")
		if err != nil {
			t.Fatalf("runbook: bundle show on %s: %v", p.TrustDomain, err)
		}
		file := filepath.Join(t.TempDir(), p.TrustDomain+".json")
		if err := os.WriteFile(file, bundle, 0o600); err != nil {
			t.Fatal(err)
		}
		if out, err := spires[i].CLI(ctx, "bundle", "set", "-format", "spiffe", "-id", "spiffe://"+p.TrustDomain, "-path", file); err != nil {
			t.Fatalf("runbook: bundle set of %s on %s: %v\n%s", p.TrustDomain, c.Name, err, out)
		}
		cftd := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": kube.ClusterFederatedTrustDomain.APIVersion(),
			"kind":       kube.ClusterFederatedTrustDomain.Kind,
			"metadata":   map[string]any{"name": strings.ReplaceAll(p.TrustDomain, ".", "-")},
			"spec": map[string]any{
				"trustDomain":       p.TrustDomain,
				"bundleEndpointURL": p.BundleEndpointURL,
				"bundleEndpointProfile": map[string]any{
					"type": "https_spiffe", "endpointSPIFFEID": p.EndpointSPIFFEID,
				},
				"trustDomainBundle": string(bundle),
				"className":         spires[i].ClassName,
			},
		}}
		if _, err := dyn.Resource(kube.ClusterFederatedTrustDomain.GVR()).Apply(ctx, cftd.GetName(), cftd,
			metav1.ApplyOptions{FieldManager: runbookManager}); err != nil {
			t.Fatalf("runbook: ClusterFederatedTrustDomain %s on %s: %v", cftd.GetName(), c.Name, err)
		}
	}
	server := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operator.openshift.io/v1alpha1",
		"kind":       "SpireServer",
		"metadata":   map[string]any{"name": "cluster"},
		"spec":       map[string]any{"federation": map[string]any{"bundleEndpoint": map[string]any{"profile": "https_spiffe"}}},
	}}
	if _, err := dyn.Resource(harness.SpireServerResource).Apply(ctx, "cluster", server,
		metav1.ApplyOptions{FieldManager: runbookManager}); err != nil {
		t.Fatalf("runbook: SpireServer federation on %s: %v", c.Name, err)
	}
}

type objectVersion struct{ name, version string }

// runbookObjects are the SpireServer and ClusterFederatedTrustDomains of c
// with their resourceVersions.
func runbookObjects(ctx context.Context, t *testing.T, c *harness.Cluster) []objectVersion {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	server, err := dyn.Resource(harness.SpireServerResource).Get(ctx, "cluster", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading SpireServer on %s: %v", c.Name, err)
	}
	out := []objectVersion{{"SpireServer/cluster", server.GetResourceVersion()}}
	list, err := dyn.Resource(kube.ClusterFederatedTrustDomain.GVR()).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing ClusterFederatedTrustDomains on %s: %v", c.Name, err)
	}
	for _, o := range list.Items {
		out = append(out, objectVersion{"ClusterFederatedTrustDomain/" + o.GetName(), o.GetResourceVersion()})
	}
	return out
}

// waitFederated waits until every SPIRE server holds the bundle of every
// other server in spires.
func waitFederated(ctx context.Context, t *testing.T, spires []*harness.Spire) {
	t.Helper()
	deadline := time.Now().Add(federationTimeout)
	for i, s := range spires {
		want := peerTrustDomains(spires, i)
		for {
			got, err := s.FederatedTrustDomains(ctx)
			if err == nil && slices.Equal(got, want) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("SPIRE %s holds bundles %v (%v), want %v within %v", s.TrustDomain, got, err, want, federationTimeout)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}
