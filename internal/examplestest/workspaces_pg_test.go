package examplestest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// The mesh run as one workspace per cluster with every workspace's state in
// one PostgreSQL database (examples/workspace-per-cluster-pg): each
// workspace is its own terraform process with its own cluster credentials
// (the project's least-privilege RBAC) and its own database role, which
// writes its own state and reads its peers'.

// pgWorkspace is one copy of examples/workspace-per-cluster-pg.
type pgWorkspace struct {
	*workspace
	pg       *harness.Postgres
	password string // of the workspace's database role, named as the workspace
	lineage  string // of its state, once written
	serial   int64
}

// newPGWorkspace starts the workspace's cluster and SPIRE server and runs
// the example's state-backend.sql for it, as a database administrator would.
func newPGWorkspace(ctx context.Context, t *testing.T, pg *harness.Postgres, name string, helm bool) *pgWorkspace {
	t.Helper()
	w := &pgWorkspace{workspace: startWorkspaceCluster(t, name, helm, "workspace-per-cluster-pg"), pg: pg}
	secret := make([]byte, 12)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	w.password = hex.EncodeToString(secret)
	script := filepath.Join(repoRoot(t), "examples", "workspace-per-cluster-pg", "state-backend.sql")
	if _, err := pg.SQLFile(ctx, script, map[string]string{"workspace": name, "password": w.password}); err != nil {
		t.Fatalf("state-backend.sql for workspace %s: %v", name, err)
	}
	return w
}

// tf runs terraform in the workspace with its credentials only: its
// cluster's least-privilege kubeconfig and its database role.
func (w *pgWorkspace) tf(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return terraformEnv(t, w.dir, []string{
		"KUBE_CONFIG_PATH=" + w.kubeconfig,
		"PG_CONN_STR=" + w.pg.ConnStr(),
		"PGUSER=" + w.name,
		"PGPASSWORD=" + w.password,
	}, args...)
}

// setPeers writes the workspace's variables: its peers' names (every
// workspace of peers but itself).
func (w *pgWorkspace) setPeers(t *testing.T, peers []*pgWorkspace) {
	t.Helper()
	names := []string{}
	for _, p := range peers {
		if p != w {
			names = append(names, p.name)
		}
	}
	w.writeVars(t, map[string]any{"peers": names})
}

// pulledState is what `terraform state pull` returns, in the parts checked.
type pulledState struct {
	Version   int    `json:"version"`
	Serial    int64  `json:"serial"`
	Lineage   string `json:"lineage"`
	Outputs   map[string]struct{ Value json.RawMessage }
	Resources []struct {
		Type      string            `json:"type"`
		Instances []json.RawMessage `json:"instances"`
	} `json:"resources"`
}

// pullState pulls the workspace's state from the database and fails the
// test unless it parses as a version 4 state of the workspace's lineage,
// with a serial no lower than the last one seen and every resource having
// an instance. It returns the output federated_with.
func (w *pgWorkspace) pullState(t *testing.T, when string) []string {
	t.Helper()
	out, code := w.tf(t, "state", "pull")
	if code != 0 {
		t.Fatalf("%s: terraform state pull of workspace %s exited %d:\n%s", when, w.name, code, out)
	}
	var st pulledState
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("%s: the state of workspace %s does not parse: %v\n%s", when, w.name, err, out)
	}
	switch {
	case st.Version != 4 || st.Lineage == "":
		t.Fatalf("%s: the state of workspace %s has version %d, lineage %q", when, w.name, st.Version, st.Lineage)
	case w.lineage != "" && st.Lineage != w.lineage:
		t.Fatalf("%s: the lineage of workspace %s's state changed from %s to %s", when, w.name, w.lineage, st.Lineage)
	case st.Serial < w.serial:
		t.Fatalf("%s: the serial of workspace %s's state went back from %d to %d", when, w.name, w.serial, st.Serial)
	}
	for _, r := range st.Resources {
		if len(r.Instances) == 0 {
			t.Fatalf("%s: the state of workspace %s holds a %s without instances", when, w.name, r.Type)
		}
	}
	w.lineage, w.serial = st.Lineage, st.Serial
	var federated []string
	if err := json.Unmarshal(st.Outputs["federated_with"].Value, &federated); err != nil {
		t.Fatalf("%s: workspace %s's state has no federated_with output: %v", when, w.name, err)
	}
	return federated
}

// pgNames lists the workspaces' names, in their order.
func pgNames(wss []*pgWorkspace) []string {
	n := make([]string, len(wss))
	for i, w := range wss {
		n[i] = w.name
	}
	return n
}

// pgRun runs terraform with args in every workspace at the same time, each
// with its own credentials, and fails the test when any exits non-zero.
func pgRun(t *testing.T, what string, wss []*pgWorkspace, args func(w *pgWorkspace) []string) ([]runResult, time.Duration) {
	t.Helper()
	results, wall := concurrently(len(wss), func(i int) (string, int) { return wss[i].tf(t, args(wss[i])...) })
	expectRuns(t, what, pgNames(wss), results, wall, args(wss[0])[0])
	return results, wall
}

// setUp initializes each workspace's backend (its own schema), all at once,
// then creates its Terraform workspace, which writes its empty state: a
// peer's terraform_remote_state then reads "not published yet" rather than
// failing. One workspace after another: the pg backend creates a workspace
// under a lock shared by the whole database, taken without waiting
// (-lock-timeout does not apply to it), so two at once make one fail.
func setUp(t *testing.T, r *wsReport, wss []*pgWorkspace) {
	t.Helper()
	_, initWall := pgRun(t, "set-up: init", wss, func(w *pgWorkspace) []string {
		return []string{"init", "-input=false", "-no-color", "-backend-config=schema_name=" + w.name}
	})
	start := time.Now()
	for _, w := range wss {
		if out, code := w.tf(t, "workspace", "new", "-no-color", w.name); code != 0 {
			t.Fatalf("set-up: terraform workspace new %s exited %d:\n%s", w.name, code, out)
		}
	}
	how := ""
	if len(wss) > 1 {
		how = " (wall, all at once)"
	}
	r.setUp = append(r.setUp, fmt.Sprintf("%s: `init` %s%s, `workspace new` %s%s",
		strings.Join(pgNames(wss), ", "), secs(initWall), how, secs(time.Since(start)), strings.Replace(how, "wall, all at once", "one after another", 1)))
}

// applyArgs is every apply of the test: -lock-timeout waits out the pg
// backend's database-wide lock, which every run takes for an instant when it
// locks its own state, and a run of the same workspace.
var applyArgs = []string{"apply", "-auto-approve", "-no-color", "-input=false", "-lock-timeout=2m"}

// workspacesClusters is how many workspaces TestAccWorkspacesPostgres
// starts with (ZT_WORKSPACES_CLUSTERS, 2 to 8): three in make test, five in
// make bench-workspaces; one more joins.
func workspacesClusters(t *testing.T) int {
	t.Helper()
	v := os.Getenv("ZT_WORKSPACES_CLUSTERS")
	if v == "" {
		return 3
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 2 || n > 8 {
		t.Fatalf("ZT_WORKSPACES_CLUSTERS=%q: want a number of workspaces from 2 to 8", v)
	}
	return n
}

// TestAccWorkspacesPostgres federates N clusters (workspacesClusters; the
// SPIRE of every second one, pg-b, pg-d, ..., laid out as the SPIFFE Helm
// chart does, the others' as the OpenShift operator does) from N workspaces
// of examples/workspace-per-cluster-pg sharing one PostgreSQL database
// (Debian's server, started by the test):
//
//  1. The database administrator runs the example's state-backend.sql for
//     each workspace; a workspace's role reads and cannot write a peer's
//     state. Each workspace runs init (at once) and `workspace new`.
//  2. Rounds of N applies started at once, until every workspace federates
//     with every peer; each state pulled after each round parses; then
//     every plan is empty, every SPIRE server holds every peer's bundle and
//     every ordered pair of workloads handshakes.
//  3. One more workspace joins while the others run nothing: one apply of
//     its own federates it with all of them; one apply each of the others
//     (at once) federates them with it. During pg-a's apply a second apply
//     of pg-a without -lock-timeout fails with Terraform's lock error, and a
//     third with it waits until the first ends and changes nothing.
//  4. Every ordered pair of all N+1 handshakes; every plan is empty.
//
// With ZT_WORKSPACES_REPORT set (make bench-workspaces), the figures go to
// that file as Markdown.
func TestAccWorkspacesPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := &wsReport{began: time.Now()}
	pg := acctest.Postgres(t)
	n := workspacesClusters(t)
	var wss []*pgWorkspace
	for i := range n {
		wss = append(wss, newPGWorkspace(ctx, t, pg, fmt.Sprintf("pg-%c", 'a'+i), i%2 == 1))
	}
	r.labReady = time.Since(r.began)
	r.names = pgNames(wss)
	for _, w := range wss {
		if spireInstall(w.spire) == "helm" {
			r.helm = append(r.helm, w.name)
		}
	}
	if _, err := pg.SQLAs(ctx, "pg-a", wss[0].password, `SELECT count(*) FROM "pg-b".states`); err != nil {
		t.Fatalf("workspace pg-a's role cannot read pg-b's state: %v", err)
	}
	_, err := pg.SQLAs(ctx, "pg-a", wss[0].password, `DELETE FROM "pg-b".states`)
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("workspace pg-a's role could write pg-b's state (%v), want permission denied", err)
	}
	for _, w := range wss {
		w.setPeers(t, wss)
	}
	setUp(t, r, wss)

	// 2. Rounds until converged.
	for round := 1; ; round++ {
		results, wall := pgRun(t, fmt.Sprintf("round %d", round), wss, func(*pgWorkspace) []string { return applyArgs })
		rr := wsRound{wall: wall, results: results, federated: map[string][]string{}}
		converged := true
		for _, w := range wss {
			rr.federated[w.name] = w.pullState(t, fmt.Sprintf("after round %d", round))
			if len(rr.federated[w.name]) != len(wss)-1 {
				converged = false
			}
		}
		r.rounds = append(r.rounds, rr)
		t.Logf("round %d: federated with %v", round, rr.federated)
		if converged {
			break
		}
		if round == 3 {
			t.Fatalf("not converged after 3 rounds: %v", rr.federated)
		}
	}
	plans, _ := pgRun(t, "plans after convergence", wss, func(*pgWorkspace) []string {
		return []string{"plan", "-detailed-exitcode", "-no-color", "-input=false", "-lock-timeout=2m"}
	})
	r.convergedPlans = plans
	base := make([]*workspace, 0, len(wss)+1)
	for _, w := range wss {
		base = append(base, w.workspace)
	}
	expectSpireHolds(ctx, t, "after convergence", base, func(w *workspace) []*workspace { return others(w, base) })
	joiner := fmt.Sprintf("pg-%c", 'a'+n)
	accept := append(trustDomains(base), joiner+".zt.test")
	for _, w := range wss {
		w.startWorkload(ctx, t, accept)
	}
	r.handshakesBefore = handshakeTable(ctx, t, base, "after convergence")

	// 3. A sixth workspace joins.
	f := newPGWorkspace(ctx, t, pg, joiner, false)
	r.joiner = joiner
	all := append(slices.Clone(wss), f)
	f.setPeers(t, all)
	setUp(t, r, []*pgWorkspace{f})
	start := time.Now()
	out, code := f.tf(t, applyArgs...)
	r.joinApply = time.Since(start)
	if code != 0 {
		t.Fatalf("join: apply of workspace %s exited %d:\n%s", joiner, code, out)
	}
	if got := f.pullState(t, "after "+joiner+"'s apply"); !slices.Equal(got, pgNames(wss)) {
		t.Fatalf("join: %s federates with %v after one apply, want %v", joiner, got, pgNames(wss))
	}
	for _, w := range wss {
		w.setPeers(t, all)
	}
	lock := make(chan lockProbe, 1)
	go func() { lock <- probeLock(ctx, t, wss[0]) }()
	r.joinResults, r.joinWall = pgRun(t, "join (the others add "+joiner+")", wss, func(*pgWorkspace) []string { return applyArgs })
	r.lock = <-lock
	r.lock.firstEnd = r.joinResults[0].end
	r.lock.check(t)
	for _, w := range all {
		want := pgNames(slices.DeleteFunc(slices.Clone(all), func(p *pgWorkspace) bool { return p == w }))
		sort.Strings(want)
		if got := w.pullState(t, "after the join"); !slices.Equal(got, want) {
			t.Errorf("after the join, %s federates with %v, want %v", w.name, got, want)
		}
	}
	base = append(base, f.workspace)
	expectSpireHolds(ctx, t, "after the join", base, func(w *workspace) []*workspace { return others(w, base) })

	// 4. Every pair of the six, and nothing left to do.
	f.startWorkload(ctx, t, accept)
	r.handshakesAfter = handshakeTable(ctx, t, base, "after "+joiner+" joined")
	r.finalPlans, _ = pgRun(t, "plans after the join", all, func(*pgWorkspace) []string {
		return []string{"plan", "-detailed-exitcode", "-no-color", "-input=false", "-lock-timeout=2m"}
	})
	r.total = time.Since(r.began)
	r.write(t, pg)
}
