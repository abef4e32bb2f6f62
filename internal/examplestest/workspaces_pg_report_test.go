package examplestest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// What TestAccWorkspacesPostgres measures, and the Markdown report
// `make bench-workspaces` keeps in bench/WORKSPACES.md.

// wsReport holds the figures of one run.
type wsReport struct {
	began            time.Time
	names            []string // the first workspaces, in order
	helm             []string // those whose SPIRE is laid out as the Helm chart does
	joiner           string   // the workspace that joins them
	labReady         time.Duration
	setUp            []string
	rounds           []wsRound
	convergedPlans   []runResult
	handshakesBefore handshakes
	joinApply        time.Duration
	joinResults      []runResult
	joinWall         time.Duration
	lock             lockProbe
	contention       contention // measured only for the report
	handshakesAfter  handshakes
	finalPlans       []runResult
	total            time.Duration
}

// wsRound is one round of applies started at once.
type wsRound struct {
	wall      time.Duration
	results   []runResult
	federated map[string][]string // by workspace, from the state pulled after the round
}

// lockProbe is what happened to two more applies of one workspace started
// while its first apply held the state lock.
type lockProbe struct {
	seen     time.Time // when the database showed the first apply's lock
	refused  runResult // -lock-timeout=0s
	waited   runResult // -lock-timeout=2m
	firstEnd time.Time
	err      error
}

// probeLock waits until the database shows w's state locked (the advisory
// lock the pg backend takes on the state's row id), then starts two applies
// of w at once: one without -lock-timeout and one with it.
func probeLock(ctx context.Context, t *testing.T, w *pgWorkspace) lockProbe {
	var p lockProbe
	held := fmt.Sprintf(`SELECT count(*) FROM pg_locks l JOIN %q.states s ON l.objid::bigint = s.id
		WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND s.name = '%s'`, w.name, w.name)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got, err := w.pg.SQL(ctx, held)
		if err == nil && got == "1" {
			break
		}
		if time.Now().After(deadline) {
			p.err = fmt.Errorf("the state of workspace %s was never seen locked (last answer %q, %v)", w.name, got, err)
			return p
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.seen = time.Now()
	both, _ := concurrently(2, func(i int) (string, int) {
		if i == 0 {
			return w.tf(t, "apply", "-auto-approve", "-no-color", "-input=false", "-lock-timeout=0s")
		}
		return w.tf(t, applyArgs...)
	})
	p.refused, p.waited = both[0], both[1]
	return p
}

// check fails the test unless the apply without -lock-timeout failed with
// Terraform's lock error while the first apply ran, and the one with it
// waited for the first to end and then changed nothing.
func (p lockProbe) check(t *testing.T) {
	t.Helper()
	if p.err != nil {
		t.Fatal(p.err)
	}
	if p.refused.code == 0 || !strings.Contains(p.refused.out, "Error acquiring the state lock") {
		t.Errorf("an apply started while another held the lock exited %d, want Terraform's lock error:\n%s", p.refused.code, p.refused.out)
	}
	if !p.refused.end.Before(p.firstEnd) {
		t.Errorf("the refused apply ended at %s, after the first apply (%s): nothing shows it was refused for the first's lock",
			p.refused.end.Format(time.StampMilli), p.firstEnd.Format(time.StampMilli))
	}
	if p.waited.code != 0 || !strings.Contains(p.waited.out, "0 added, 0 changed, 0 destroyed") {
		t.Errorf("the apply with -lock-timeout exited %d, want it to wait and change nothing:\n%s", p.waited.code, p.waited.out)
	}
	if !p.waited.end.After(p.firstEnd) {
		t.Errorf("the apply with -lock-timeout ended before the first apply did")
	}
	t.Logf("lock: without -lock-timeout refused after %s; with it waited and ended %s after the first apply",
		p.refused.took().Round(100*time.Millisecond), p.waited.end.Sub(p.firstEnd).Round(100*time.Millisecond))
}

// lockError is the first lines of Terraform's lock error in out.
func lockError(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(strings.Trim(l, "│╷╵ "))
		if strings.HasPrefix(l, "Error: ") || strings.HasPrefix(l, "Error message: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, " / ")
}

// handshakes is how long each ordered pair of workloads took to handshake,
// counted from when the check began.
type handshakes struct {
	names []string
	took  map[[2]string]time.Duration
}

// handshakeTable checks every ordered pair of the workspaces' workloads at
// once, fails the test unless each handshakes, and returns the times.
func handshakeTable(ctx context.Context, t *testing.T, wss []*workspace, when string) handshakes {
	t.Helper()
	h := handshakes{took: map[[2]string]time.Duration{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for _, from := range wss {
		h.names = append(h.names, from.name)
		for _, to := range wss {
			if from == to {
				continue
			}
			wg.Go(func() {
				_, err := harness.WaitMTLS(ctx, from.workload, to.workload, true, mtlsTimeout)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Errorf("%s: %s -> %s: %v", when, from.name, to.name, err)
					return
				}
				h.took[[2]string{from.name, to.name}] = time.Since(start)
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("%s: all %d ordered pairs of %v handshake", when, len(h.took), h.names)
	return h
}

func (h handshakes) markdown(b *strings.Builder) {
	fmt.Fprintf(b, "| from \\ to | %s |\n|---|%s\n", strings.Join(h.names, " | "), strings.Repeat("---|", len(h.names)))
	for _, from := range h.names {
		fmt.Fprintf(b, "| %s |", from)
		for _, to := range h.names {
			if from == to {
				b.WriteString(" - |")
				continue
			}
			fmt.Fprintf(b, " ok %.1f s |", h.took[[2]string{from, to}].Seconds())
		}
		b.WriteString("\n")
	}
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// write puts the report into $ZT_WORKSPACES_REPORT, when set.
func (r *wsReport) write(t *testing.T, pg *harness.Postgres) {
	t.Helper()
	path := os.Getenv("ZT_WORKSPACES_REPORT")
	if path == "" {
		return
	}
	r.contention = measureContention(context.Background(), t, pg, contentionWorkspaces, contentionRounds)
	pgVersion, _ := pg.SQL(context.Background(), "SHOW server_version")
	tfVersion, _ := terraform(t, t.TempDir(), "version")
	tfVersion, _, _ = strings.Cut(tfVersion, "\n")
	n := len(r.names)
	var b strings.Builder
	fmt.Fprintf(&b, `# One workspace per cluster on a shared PostgreSQL state backend

Written by `+"`make bench-workspaces`"+` (TestAccWorkspacesPostgres in internal/examplestest) on %s, %d cores
shared with other work (load average %s at the end). PostgreSQL %s (Debian's package, started by the test as an
unprivileged user), %s, Terraform's `+"`pg`"+` backend, one schema and one database role per workspace
(examples/workspace-per-cluster-pg, state-backend.sql). %d clusters, each with a kube-apiserver, a SPIRE server and
spire-controller-manager, then a k8s_psat agent and a workload; the SPIRE of %s laid out as the SPIFFE Helm chart
does, the others' as the OpenShift operator does. Every workspace is its own terraform process with its own
credentials: the project's least-privilege RBAC manifest bound to a ServiceAccount of its own cluster, and its own
database role, which reads its peers' states and cannot write them.

Total: %s (clusters and SPIRE ready after %s).

## Set-up

`, time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), loadAverage(), pgVersion, tfVersion, n,
		strings.Join(r.helm, ", "), secs(r.total), secs(r.labReady))
	for _, s := range r.setUp {
		fmt.Fprintf(&b, "- %s\n", s)
	}
	fmt.Fprintf(&b, "\n## Rounds: %d applies started at once, until every workspace federates with every peer\n\n", n)
	fmt.Fprintf(&b, "| round | wall | %s |\n|---|---|%s\n", strings.Join(r.names, " | "), strings.Repeat("---|", n))
	for i, rr := range r.rounds {
		fmt.Fprintf(&b, "| %d | %s |", i+1, secs(rr.wall))
		for j, name := range r.names {
			fmt.Fprintf(&b, " %s, %d peers |", secs(rr.results[j].took()), len(rr.federated[name]))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nEach cell: that workspace's apply, and how many peers it federates with after it. Order in which the applies ended, seconds after the round's start:\n\n")
	for i, rr := range r.rounds {
		order := slicesIndexes(len(rr.results))
		sort.Slice(order, func(a, c int) bool { return rr.results[order[a]].end.Before(rr.results[order[c]].end) })
		var s []string
		for _, j := range order {
			s = append(s, fmt.Sprintf("%s (%s)", r.names[j], secs(rr.results[j].end.Sub(rr.results[0].start))))
		}
		fmt.Fprintf(&b, "- round %d: %s\n", i+1, strings.Join(s, ", "))
	}
	fmt.Fprintf(&b, "\nConverged after %d rounds; then `plan -detailed-exitcode` exits 0 in every workspace (%s).\n",
		len(r.rounds), runTimes(r.convergedPlans, r.names))
	b.WriteString("\nEvery ordered pair of workloads, seconds until it handshook, counted from the start of the check (right after the last workload started):\n\n")
	r.handshakesBefore.markdown(&b)
	all := append(slices.Clone(r.names), r.joiner)
	fmt.Fprintf(&b, `
## A workspace joins

%[1]s's own apply, while the others run nothing: %[2]s; it federates with all %[3]d at once.
Then one apply each of the %[3]d others, started at once: %[4]s wall (%[5]s); each federates with %[1]s.
Plans of all %[6]d afterwards: exit 0 (%[7]s).

## Locking

During %[8]s's apply of the join, once the database showed its state locked, two more applies of %[8]s started:

- without `+"`-lock-timeout`"+`: exit %[9]d after %[10]s, while the first still ran: %[11]s
- with `+"`-lock-timeout=2m`"+`: waited %[12]s, until the first ended, then ran %[13]s and changed nothing (Apply complete! Resources: 0 added, 0 changed, 0 destroyed).

Every state pulled after every run (`+"`terraform state pull`"+`) parsed as a version 4 state of its workspace's
lineage, with a serial that never went back.

Without `+"`-lock-timeout`"+`, a run also fails when another workspace's run holds the pg backend's database-wide
lock for the instant it takes its own: %[14]d of %[15]d plans failed so (`+"`Cannot lock workspace; already locked for workspace creation`"+`),
%[16]d workspaces of a configuration holding one terraform_data planning at once, %[17]d times; with
`+"`-lock-timeout=30s`"+`, %[18]d of %[15]d.

## Every ordered pair after the join

`, r.joiner, secs(r.joinApply), n, secs(r.joinWall), runTimes(r.joinResults, r.names), n+1, runTimes(r.finalPlans, all),
		r.names[0], r.lock.refused.code, secs(r.lock.refused.took()), lockError(r.lock.refused.out),
		secs(r.lock.firstEnd.Sub(r.lock.waited.start)), secs(r.lock.waited.end.Sub(r.lock.firstEnd)),
		r.contention.refusedWithout, r.contention.runs, contentionWorkspaces, contentionRounds, r.contention.refusedWith)
	r.handshakesAfter.markdown(&b)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Errorf("writing the report: %v", err)
	}
	t.Logf("report written to %s", path)
}

// runTimes lists each run's time after its workspace's name.
func runTimes(results []runResult, names []string) string {
	var s []string
	for i, r := range results {
		s = append(s, fmt.Sprintf("%s %s", names[i], secs(r.took())))
	}
	return strings.Join(s, ", ")
}

// loadAverage is the one-minute load average, from /proc.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return "unknown"
	}
	return f[0]
}

func slicesIndexes(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// The contention measurement: so many workspaces planning at once, so many
// times without -lock-timeout and as many with it.
const (
	contentionWorkspaces = 5
	contentionRounds     = 10
)

// contention counts the runs that failed on the pg backend's lock shared by
// the whole database, among runs of distinct workspaces started at once.
type contention struct {
	runs, refusedWithout, refusedWith int
}

// measureContention measures that lock apart from the example: n
// workspaces of a configuration holding one terraform_data (no provider to
// start, so the runs are short and collide often), each with its own role
// and schema from state-backend.sql, plan at once, rounds times without
// -lock-timeout and rounds times with it. Only a run of another workspace
// can hold the lock here, for the instant it takes its own.
func measureContention(ctx context.Context, t *testing.T, pg *harness.Postgres, n, rounds int) contention {
	t.Helper()
	script := filepath.Join(repoRoot(t), "examples", "workspace-per-cluster-pg", "state-backend.sql")
	envs := make([][]string, n)
	dirs := make([]string, n)
	for i := range n {
		name := fmt.Sprintf("lock-%c", 'a'+i)
		password := name + "-" + fmt.Sprint(time.Now().UnixNano())
		if _, err := pg.SQLFile(ctx, script, map[string]string{"workspace": name, "password": password}); err != nil {
			t.Fatal(err)
		}
		dirs[i] = t.TempDir()
		config := `terraform {
  backend "pg" {
    skip_schema_creation = true
    skip_table_creation  = true
    skip_index_creation  = true
  }
}

resource "terraform_data" "one" {
  input = 1
}
`
		if err := os.WriteFile(filepath.Join(dirs[i], "main.tf"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		envs[i] = []string{"PG_CONN_STR=" + pg.ConnStr(), "PGUSER=" + name, "PGPASSWORD=" + password}
		for _, args := range [][]string{{"init", "-input=false", "-no-color", "-backend-config=schema_name=" + name}, {"workspace", "new", "-no-color", name}} {
			if out, code := terraformEnv(t, dirs[i], envs[i], args...); code != 0 {
				t.Fatalf("terraform %s in %s exited %d:\n%s", args[0], name, code, out)
			}
		}
	}
	var c contention
	for _, timeout := range []string{"0s", "30s"} {
		for range rounds {
			results, _ := concurrently(n, func(i int) (string, int) {
				return terraformEnv(t, dirs[i], envs[i], "plan", "-no-color", "-input=false", "-lock-timeout="+timeout)
			})
			for _, r := range results {
				switch {
				case r.code == 0:
				case strings.Contains(r.out, "already locked for workspace creation"):
					if timeout == "0s" {
						c.refusedWithout++
					} else {
						c.refusedWith++
					}
				default:
					t.Fatalf("a plan with -lock-timeout=%s failed otherwise than on the lock:\n%s", timeout, r.out)
				}
			}
			if timeout == "0s" {
				c.runs += n
			}
		}
	}
	if c.refusedWith != 0 {
		t.Errorf("%d of %d plans with -lock-timeout=30s failed on the database-wide lock", c.refusedWith, c.runs)
	}
	t.Logf("the pg backend's database-wide lock: %d of %d plans of %d workspaces at once failed on it without -lock-timeout, %d with -lock-timeout=30s",
		c.refusedWithout, c.runs, n, c.refusedWith)
	return c
}
