package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// startExtraLab starts clusters beyond the audited lab (their faults must
// not disturb the other tests) and stops them when the binary exits.
func startExtraLab(t *testing.T, name string, opts harness.Options) *harness.Lab {
	t.Helper()
	setup(t)
	return acctest.LabFor(t, name, opts)
}

// providerFor is a provider block whose default connection and only
// `clusters` entry is c, authenticated with token.
func providerFor(c *harness.Cluster, token string) string {
	return fmt.Sprintf("provider \"zerotrust\" {\n  kubernetes = %s\n  clusters = {\n    %s = %s\n  }\n}\n",
		connection(c, token, "  "), c.Name, connection(c, token, "    "))
}

// stateNames returns the `name` of every zerotrust_federated_trust_domain
// instance in the state, from `terraform show -json`.
func (d *tfDir) stateNames() []string {
	d.t.Helper()
	code, out := d.run(nil, "show", "-json")
	if code != 0 {
		d.t.Fatalf("terraform show -json (exit %d):\n%s", code, out)
	}
	var st struct {
		Values struct {
			RootModule struct {
				Resources []struct {
					Type   string         `json:"type"`
					Values map[string]any `json:"values"`
				} `json:"resources"`
			} `json:"root_module"`
		} `json:"values"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		d.t.Fatalf("terraform show -json: %v\n%s", err, tail(out, 20))
	}
	var names []string
	for _, r := range st.Values.RootModule.Resources {
		if r.Type == "zerotrust_federated_trust_domain" {
			n, _ := r.Values["name"].(string)
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// checkStateMatchesCluster compares state, cluster and the expected names:
// each object exactly once in each, nothing on the cluster that the state
// does not hold (an orphan), nothing in state that the cluster lacks.
func checkStateMatchesCluster(t *testing.T, d *tfDir, c *harness.Cluster, prefix string, want int) (orphans int) {
	t.Helper()
	inState := d.stateNames()
	onCluster, err := cftdNames(context.Background(), c, prefix+"-")
	if err != nil {
		t.Fatalf("listing objects on %s: %v", c.Name, err)
	}
	sort.Strings(onCluster)
	stateSet := map[string]int{}
	for _, n := range inState {
		stateSet[n]++
	}
	for n, k := range stateSet {
		if k > 1 {
			t.Errorf("%s is %d times in state", n, k)
		}
	}
	for _, n := range onCluster {
		if stateSet[n] == 0 {
			orphans++
			t.Errorf("orphan: %s exists on cluster %s but not in state", n, c.Name)
		}
	}
	if len(inState) != want || len(onCluster) != want {
		t.Errorf("want %d objects: state holds %d, cluster %s holds %d", want, len(inState), c.Name, len(onCluster))
	}
	return orphans
}

// TestAccApplySurvivesAPIServerKill kills (SIGKILL) the kube-apiserver while an
// apply of 50 ClusterFederatedTrustDomains is under way, once each at
// several kill points: when N objects exist on the cluster, as seen by a
// separate admin client. Rounds cycle through three endings: the apiserver
// comes back a second later (the apply waits for it: the cluster answered
// earlier in the run, kube.Client's reconnect timeout; the first apply must
// succeed);
// the user interrupts terraform while it is down; terraform and the provider
// are SIGKILLed too and the state of that apply is lost, so its objects
// exist but the state never learns of them. Then the apiserver is restarted and the configuration
// re-applied: state must match the cluster (empty plan, 50 objects, no
// orphans, no duplicates), and destroy must leave nothing behind.
func TestAccApplySurvivesAPIServerKill(t *testing.T) {
	const objects = 50
	killPoints := []int{3, 8, 13, 18, 23, 28, 33, 38, 41, 44}
	l := startExtraLab(t, "faults", harness.Options{Names: []string{"faults"}})
	c := l.Clusters[0]
	d := newTFDir(t, "kill")
	ctx := context.Background()

	for round, point := range killPoints {
		prefix := fmt.Sprintf("kill%d", round)
		d.write(providerFor(c, c.Token) + ftdsConfig(c.Name, prefix, objects))
		var out bytes.Buffer
		cmd := d.start(&out, nil, "apply", "-auto-approve", "-input=false", "-parallelism=2")
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })

		// Poll the API as admin until the kill point is reached.
		var seen int
		deadline := time.Now().Add(2 * time.Minute)
		for {
			names, err := cftdNames(ctx, c, prefix+"-")
			if err == nil {
				seen = len(names)
			}
			if seen >= point {
				break
			}
			select {
			case err := <-done:
				t.Fatalf("round %d: terraform exited (%v) before %d objects existed (%d):\n%s", round, err, point, seen, tail(out.String(), 40))
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d objects after 2m, waiting for %d:\n%s", round, seen, point, tail(out.String(), 40))
			}
			time.Sleep(5 * time.Millisecond)
		}
		if err := c.StopAPIServer(); err != nil {
			t.Fatalf("round %d: killing the apiserver: %v", round, err)
		}
		select {
		case err := <-done:
			t.Fatalf("round %d: the apply had already finished (%v) when the apiserver died at %d objects: the kill missed the apply",
				round, err, seen)
		default:
		}
		apiserverKills.Add(1)

		firstExit := "succeeded"
		switch round % 3 {
		case 0: // back a second later: the apply waits for it
			time.Sleep(time.Second)
			if err := c.StartAPIServer(ctx); err != nil {
				t.Fatalf("round %d: restarting the apiserver: %v", round, err)
			}
			if err := <-done; err != nil {
				t.Errorf("round %d: the apply did not ride out a restart of a second (%v):\n%s", round, err, tail(out.String(), 40))
				firstExit = "failed: " + err.Error()
			}
		case 1: // the user interrupts terraform while the apiserver is down
			time.Sleep(500 * time.Millisecond)
			_ = cmd.Process.Signal(syscall.SIGINT)
			select {
			case err := <-done:
				firstExit = fmt.Sprintf("interrupted (%v)", err)
			case <-time.After(60 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				t.Fatalf("round %d: terraform did not stop within 60s of SIGINT while the apiserver was down (killed: %v):\n%s",
					round, <-done, tail(out.String(), 40))
			}
			if err := c.StartAPIServer(ctx); err != nil {
				t.Fatalf("round %d: restarting the apiserver: %v", round, err)
			}
		case 2:
			// Terraform and the provider crash too (SIGKILL), and the state
			// written during this apply is lost (as with a backend whose last
			// persist failed): the objects exist, the state never learns of them.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			firstExit = fmt.Sprintf("crashed (%v) and lost its state", <-done)
			for _, f := range []string{"terraform.tfstate", "terraform.tfstate.backup"} {
				if err := os.Remove(filepath.Join(d.dir, f)); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
			if err := c.StartAPIServer(ctx); err != nil {
				t.Fatalf("round %d: restarting the apiserver: %v", round, err)
			}
		}
		if strings.Contains(out.String(), "panic:") {
			t.Fatalf("round %d: the provider panicked:\n%s", round, out.String())
		}

		// Objects written before the kill whose response never reached
		// terraform are on the cluster but not in state: the re-apply must
		// adopt them (same name, same field manager), not duplicate or orphan them.
		inState := map[string]bool{}
		for _, n := range d.stateNames() {
			inState[n] = true
		}
		onCluster, err := cftdNames(ctx, c, prefix+"-")
		if err != nil {
			t.Fatalf("round %d: listing objects: %v", round, err)
		}
		missing := 0
		for _, n := range onCluster {
			if !inState[n] {
				missing++
			}
		}
		killAdopted.Add(int64(missing))
		if round%3 == 2 && missing == 0 {
			t.Errorf("round %d: after the crash every object was in state: the adoption path was not exercised", round)
		}

		d.mustApply(nil, "-parallelism=10")
		d.expectEmptyPlan()
		orphans := checkStateMatchesCluster(t, d, c, prefix, objects)
		killOrphans.Add(int64(orphans))
		t.Logf("round %d: apiserver killed at %d/%d objects; first apply %s, leaving %d objects on the cluster but not in state; "+
			"re-apply: %d objects, %d orphans, empty plan", round, seen, objects, firstExit, missing, objects, orphans)

		if code, out := d.run(nil, "destroy", "-auto-approve", "-input=false", "-parallelism=20"); code != 0 {
			t.Fatalf("round %d: destroy failed:\n%s", round, tail(out, 40))
		}
		left, err := cftdNames(ctx, c, prefix+"-")
		if err != nil {
			t.Fatal(err)
		}
		if len(left) != 0 {
			killOrphans.Add(int64(len(left)))
			t.Errorf("round %d: destroy left %d objects: %v", round, len(left), left)
		}
		if t.Failed() {
			return
		}
	}
	killRuns.Add(1)
}

// TestAccApplyThroughThrottling applies 30 objects at -parallelism=20 to an
// apiserver that serves one request at a time and answers 429 to the rest
// (max in-flight 1, priority and fairness off so the classic limiter
// answers). The provider's identity is not in system:masters, which that
// limiter exempts. The apply must succeed through retries, and the audit log
// must show the 429s really happened.
func TestAccApplyThroughThrottling(t *testing.T) {
	const objects = 30
	l := startExtraLab(t, "throttled", harness.Options{
		Names:    []string{"throttled"},
		AuditLog: true,
		APIServerFlags: []string{
			"--max-requests-inflight=1", "--max-mutating-requests-inflight=1", "--enable-priority-and-fairness=false",
		},
	})
	c := l.Clusters[0]
	who := newIdentity(t, c, "throttled")
	d := newTFDir(t, "throttled")
	d.write(providerFor(c, who.Token) + ftdsConfig(c.Name, "thr", objects))
	out := d.mustApply(nil, "-parallelism=20")
	checkQuietApply(t, out)
	d.expectEmptyPlan()
	checkStateMatchesCluster(t, d, c, "thr", objects)
	counts := countAudit(t, c, who.User)
	if counts.TooMany == 0 {
		t.Fatalf("the apiserver never answered 429 to %s (%d reads, %d writes): the test proves nothing", who.User, counts.Reads, counts.Writes)
	}
	throttled429s.Store(int64(counts.TooMany))
	if !t.Failed() {
		throttledOK.Store(objects)
	}
	t.Logf("%d objects applied at parallelism 20 through %d responses 429 (%d reads, %d writes)", objects, counts.TooMany, counts.Reads, counts.Writes)
}
