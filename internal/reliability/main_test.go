// Package reliability is the reliability and security suite: bad
// input refused at plan with zero writes, apiserver kills mid-apply, 429
// throttling, secrets kept out of logs and state, and wide parallel applies.
// It runs its own lab with the apiserver audit log on, so the write counts
// are not polluted by other packages' tests.
package reliability

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/harness"
)

// Cluster names of this package's audited lab.
const (
	east  = "east"
	west  = "west"
	north = "north"
)

var (
	work string

	setupOnce sync.Once
	setupErr  error
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
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	work, err = os.MkdirTemp("", "zerotrust-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "reliability:", err)
		return 1
	}
	defer os.RemoveAll(work)
	code := m.Run()
	runAtExit()
	if lab != nil {
		if err := lab.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "reliability: stopping clusters:", err)
		}
		fmt.Println(summary())
	}
	return code
}

// setup readies the terraform CLI and starts the audited lab on first use,
// so a run that selects none of this package's tests (make unit) starts
// nothing. Every test calls it, directly or through cluster, newTFDir or
// startExtraLab, before it runs terraform; a lab that cannot start fails
// each test with the reason.
func setup(t *testing.T) {
	t.Helper()
	setupOnce.Do(func() {
		if terraform, setupErr = acctest.SetupTerraform(work); setupErr != nil {
			setupErr = fmt.Errorf("terraform CLI unavailable: %w", setupErr)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		l, err := harness.Start(ctx, harness.Options{
			Names:    []string{east, west, north},
			Dir:      filepath.Join(work, "lab"),
			AuditLog: true,
		})
		if err != nil {
			setupErr = fmt.Errorf("cannot start the audited test clusters: %w", err)
			return
		}
		lab = l
	})
	if setupErr != nil {
		t.Fatalf("reliability: %v", setupErr)
	}
}

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
	return "reliability: " + strings.Join(parts, "; ")
}

var (
	atExitMu sync.Mutex
	atExit   []func()
)

// addAtExit registers f to run after all tests, before the lab stops
// (clusters started lazily by one test stop here).
func addAtExit(f func()) {
	atExitMu.Lock()
	defer atExitMu.Unlock()
	atExit = append(atExit, f)
}

func runAtExit() {
	atExitMu.Lock()
	defer atExitMu.Unlock()
	for i := len(atExit) - 1; i >= 0; i-- {
		atExit[i]()
	}
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
