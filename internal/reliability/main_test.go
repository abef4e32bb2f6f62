// Package reliability is the reliability and security suite: bad
// input refused at plan with zero writes, apiserver kills mid-apply, API
// server restarts and freezes ridden out on one cluster of three, 429
// throttling, secrets kept out of logs and state, and wide parallel applies.
// It runs its own lab with the apiserver audit log on, so the write counts
// are not polluted by other packages' tests.
package reliability

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// Cluster names of this package's audited lab.
const (
	east  = "east"
	west  = "west"
	north = "north"
)

var (
	// work lives as long as the test binary (acctest.WorkDir); setup sets it.
	work      string
	lab       *harness.Lab
	terraform string

	providerOnce sync.Once
	providerDir  string
	providerErr  error

	// Counters the tests fill for the summary line.
	badInputsCaught atomic.Int64
	corpusWrites    atomic.Int64
	corpusRan       atomic.Bool
	apiserverKills  atomic.Int64
	killOrphans     atomic.Int64
	killRuns        atomic.Int64
	killAdopted     atomic.Int64
	driftOK         atomic.Bool
	throttledOK     atomic.Int64
	throttled429s   atomic.Int64
	unavailableOK   atomic.Int64
	unavailable503s atomic.Int64
	secretsChecked  atomic.Int64
	trustRefusals   atomic.Int64
	parallelObjects atomic.Int64
	onceWarnings    atomic.Int64
	// blipNotes are the blip tests' results (blipNote).
	blipMu    sync.Mutex
	blipNotes []string
)

func TestMain(m *testing.M) {
	acctest.MainThen(m, func() {
		if lab == nil {
			return
		}
		line := summary()
		fmt.Println(line)
		// make test runs this package beside the others, where go test
		// shows a passing package's output only with -v: the summary goes
		// to the file the Makefile prints after the run.
		if path := os.Getenv("ZT_RELIABILITY_SUMMARY"); path != "" {
			if err := os.WriteFile(path, []byte(line+"\n"), 0o600); err != nil {
				fmt.Fprintln(os.Stderr, "reliability: writing the summary:", err)
			}
		}
	})
}

// setup readies the terraform CLI and starts the audited lab on first use
// (acctest.LabFor), so a run that selects none of this package's tests
// (make unit) starts nothing. Every test calls it, directly or through
// cluster, newTFDir or startExtraLab, before it runs terraform; a lab that
// cannot start fails each test with the reason.
func setup(t *testing.T) {
	t.Helper()
	l := acctest.LabFor(t, "reliability", harness.Options{Names: []string{east, west, north}, AuditLog: true})
	w, tf := acctest.WorkDir(t), acctest.TerraformPath(t)
	setupOnce.Do(func() { work, terraform, lab = w, tf, l })
}

// setupOnce publishes setup's values once to every test that calls it.
var setupOnce sync.Once

func summary() string {
	parts := []string{}
	if corpusRan.Load() {
		parts = append(parts, fmt.Sprintf("%d bad inputs caught at plan, %d writes", badInputsCaught.Load(), corpusWrites.Load()))
	}
	if killRuns.Load() > 0 {
		parts = append(parts, fmt.Sprintf("%d apiserver kills, %d orphans (%d objects left out of state by an interrupted or crashed apply, adopted by the re-apply)",
			apiserverKills.Load(), killOrphans.Load(), killAdopted.Load()))
	}
	if throttledOK.Load() > 0 {
		parts = append(parts, fmt.Sprintf("%d objects applied through %d throttled (429) requests", throttledOK.Load(), throttled429s.Load()))
	}
	if unavailableOK.Load() > 0 {
		parts = append(parts, fmt.Sprintf("%d objects applied and destroyed through %d injected 503s", unavailableOK.Load(), unavailable503s.Load()))
	}
	if driftOK.Load() {
		parts = append(parts, "drift planned back exactly, other managers' fields kept")
	}
	if secretsChecked.Load() > 0 {
		parts = append(parts, fmt.Sprintf("%d secrets absent from trace log and state", secretsChecked.Load()))
	}
	if trustRefusals.Load() > 0 {
		parts = append(parts, fmt.Sprintf("%d untrusted bundle endpoints refused, nothing stored", trustRefusals.Load()))
	}
	if parallelObjects.Load() > 0 {
		parts = append(parts, fmt.Sprintf("%d objects on 3 clusters at parallelism 50, 0 throttling errors", parallelObjects.Load()))
	}
	if onceWarnings.Load() > 0 {
		parts = append(parts, fmt.Sprintf("%d once-per-walk warnings said once each by the built binary, same plan with TF_LOG=trace", onceWarnings.Load()))
	}
	blipMu.Lock()
	parts = append(parts, blipNotes...)
	blipMu.Unlock()
	return "reliability: " + strings.Join(parts, "; ")
}

// providerBinaryDir builds the provider once into a directory usable in a
// CLI config's dev_overrides: the fault tests need a real plugin process
// they can run terraform against and interrupt.
func providerBinaryDir(t *testing.T) string {
	t.Helper()
	providerOnce.Do(func() {
		root, err := harness.RepoRoot()
		if err != nil {
			providerErr = err
			return
		}
		providerDir = filepath.Join(work, "provider")
		cmd := exec.Command("go", "build", "-o", filepath.Join(providerDir, "terraform-provider-zerotrust"), ".")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			providerErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if providerErr != nil {
		t.Fatalf("building the provider: %v", providerErr)
	}
	return providerDir
}

func cluster(t *testing.T, name string) *harness.Cluster {
	t.Helper()
	setup(t)
	c := lab.Cluster(name)
	if c == nil {
		t.Fatalf("no cluster %q in the lab", name)
	}
	return c
}
