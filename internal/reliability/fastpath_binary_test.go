package reliability

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

// Objects of each fast-path resource TestAccFastPathWarnsOnceAndLogsChangeNothing
// manages on one cluster.
const (
	onceFederations = 12
	onceBundles     = 4
)

// TestAccFastPathWarnsOnceAndLogsChangeNothing runs the built provider
// binary under Terraform, as users do, on a cluster with real SPIRE whose
// credentials may not exec into the SPIRE server (the published role
// without pods/exec). A refresh of zerotrust_federated_trust_domain and
// zerotrust_spire_bundle then cannot ask SPIRE, which each says once per
// cluster and walk: the fast path claims the warning once and leaves that
// one request to the framework, which says it; every other request is
// answered fast. So the plan carries each warning exactly once (a request
// that reached the fast path twice would lose it). The same plan with
// TF_LOG=trace gives the same changes and the same diagnostics, and its log
// shows the requests the fast path answered.
func TestAccFastPathWarnsOnceAndLogsChangeNothing(t *testing.T) {
	setup(t)
	spire := acctest.Spire(t, acctest.East)
	c := spire.Cluster
	admin := newIdentity(t, c, "fastpath-admin")
	noExec := identityBoundTo(t, c, "fastpath-noexec", "reliability-fastpath-noexec", []rbacv1.PolicyRule{
		{APIGroups: []string{"", "apps", "apiextensions.k8s.io"},
			Resources: []string{"namespaces", "configmaps", "pods", "services", "statefulsets", "deployments", "customresourcedefinitions"},
			Verbs:     []string{"get", "list", "watch"}},
		{APIGroups: []string{"spire.spiffe.io", "operator.openshift.io"}, Resources: []string{"*"}, Verbs: []string{"*"}},
	})

	id := acctest.UniqueName("once")
	d := newTFDir(t, "fastpath-once")
	bundles := filepath.Join(d.dir, "bundles")
	if err := os.MkdirAll(bundles, 0o755); err != nil {
		t.Fatal(err)
	}
	peer := func(kind string, i int) string { return fmt.Sprintf("%s%d-%s.test", kind, i, id) }
	for i := range max(onceFederations, onceBundles) {
		for _, kind := range []string{"f", "b"} {
			td := spiffeid.RequireTrustDomainFromString(peer(kind, i))
			ca := bundletest.NewCA(t, td, time.Now().Add(-time.Minute), time.Now().Add(24*time.Hour))
			if err := os.WriteFile(filepath.Join(bundles, fmt.Sprintf("%s%d.json", kind, i)), []byte(bundletest.BundleJSON(t, td, ca)), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	config := func(who identity) string {
		return fmt.Sprintf(`
provider "zerotrust" {
  kubernetes = %[1]s
}

resource "zerotrust_federated_trust_domain" "peer" {
  count                    = %[2]d
  name                     = "f${count.index}-%[4]s"
  trust_domain             = "f${count.index}-%[4]s.test"
  bundle_endpoint_url      = "https://127.0.0.1:9/f${count.index}"
  bundle_endpoint_profile  = { type = "https_web" }
  trust_domain_bundle      = file("%[5]s/f${count.index}.json")
  delete_bundle_on_destroy = false
}

resource "zerotrust_spire_bundle" "carried" {
  count        = %[3]d
  trust_domain = "b${count.index}-%[4]s.test"
  bundle       = file("%[5]s/b${count.index}.json")
}
`, connection(c, who.Token, ""), onceFederations, onceBundles, id, bundles)
	}

	d.write(config(admin))
	d.mustApply(nil)
	t.Cleanup(func() {
		d.write(config(admin))
		if code, out := d.run(nil, "destroy", "-auto-approve", "-input=false"); code != 0 {
			t.Errorf("destroy exited %d:\n%s", code, tail(out, 40))
		}
	})

	d.write(config(noExec))
	quiet := onePlan(t, d, "quiet", nil)
	logPath := filepath.Join(d.dir, "trace.log")
	traced := onePlan(t, d, "traced", []string{"TF_LOG=trace", "TF_LOG_PATH=" + logPath})

	for summary, want := range map[string]int{"SPIRE Not Asked": 1, "SPIRE Bundles Not Read": 1} {
		if got := quiet.warnings[summary]; got != want {
			t.Errorf("plan without logs: %q said %d times, want %d (once per cluster and walk):\n%s", summary, got, want, quiet.output)
		}
	}
	if !slices.Equal(quiet.diagnostics, traced.diagnostics) {
		t.Errorf("diagnostics differ with TF_LOG=trace:\nwithout: %q\nwith:    %q", quiet.diagnostics, traced.diagnostics)
	}
	if !slices.Equal(quiet.changes, traced.changes) {
		t.Errorf("planned changes differ with TF_LOG=trace:\nwithout: %q\nwith:    %q", quiet.changes, traced.changes)
	}

	// The fast path served this plan, and said so in the log.
	logged, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	answered := map[string]int{}
	for _, line := range strings.Split(string(logged), "\n") {
		if !strings.Contains(line, "Answered by the fast path") {
			continue
		}
		for _, typ := range []string{"zerotrust_federated_trust_domain", "zerotrust_spire_bundle"} {
			if strings.Contains(line, "tf_resource_type="+typ) {
				answered[typ]++
			}
		}
	}
	// Per federation: its state upgrade, refresh (all but the one left to
	// the framework to warn), configuration check and plan; per carried
	// bundle at least the state upgrade and plan (its refresh, which cannot
	// ask SPIRE, is the framework's).
	if answered["zerotrust_federated_trust_domain"] < 3*onceFederations || answered["zerotrust_spire_bundle"] < 2*onceBundles {
		t.Errorf("the trace log shows %v fast answers, want at least %d for zerotrust_federated_trust_domain and %d for "+
			"zerotrust_spire_bundle", answered, 3*onceFederations, 2*onceBundles)
	}
	if !t.Failed() {
		onceWarnings.Add(int64(len(quiet.warnings)))
	}
	t.Logf("one plan, %d federations and %d carried bundles, SPIRE not askable: warnings %v without logs, %v with "+
		"TF_LOG=trace; fast answers in the trace log %v; %d planned changes either way",
		onceFederations, onceBundles, quiet.warnings, traced.warnings, answered, len(quiet.changes))
}

// planRun is what one `terraform plan -json` said.
type planRun struct {
	output      string
	warnings    map[string]int // by summary
	diagnostics []string       // severity, summary and detail, sorted
	changes     []string       // planned changes and drift, sorted
}

// onePlan runs `terraform plan -json` in d with env and reads its messages.
func onePlan(t *testing.T, d *tfDir, name string, env []string) planRun {
	t.Helper()
	code, out := d.run(env, "plan", "-input=false", "-json", "-detailed-exitcode")
	if code == 1 {
		t.Fatalf("%s plan failed:\n%s", name, tail(out, 40))
	}
	run := planRun{output: out, warnings: map[string]int{}}
	for _, line := range strings.Split(out, "\n") {
		var msg struct {
			Type       string `json:"type"`
			Diagnostic struct {
				Severity, Summary, Detail string
			} `json:"diagnostic"`
			Change json.RawMessage `json:"change"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil {
			continue
		}
		switch msg.Type {
		case "diagnostic":
			dg := msg.Diagnostic
			if dg.Summary == "Provider development overrides are in effect" {
				continue
			}
			if dg.Severity == "warning" {
				run.warnings[dg.Summary]++
			}
			// Not the address: which object of a cluster says a once-per-walk
			// warning depends on the order of Terraform's parallel walk.
			run.diagnostics = append(run.diagnostics, strings.Join([]string{dg.Severity, dg.Summary, dg.Detail}, " | "))
		case "planned_change", "resource_drift":
			run.changes = append(run.changes, msg.Type+" "+string(msg.Change))
		}
	}
	slices.Sort(run.diagnostics)
	slices.Sort(run.changes)
	return run
}
