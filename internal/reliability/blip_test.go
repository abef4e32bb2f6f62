package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// The blip tests apply blipObjects ClusterFederatedTrustDomains on each of
// three clusters at parallelism 4 and, mid-apply, take west's API server
// away after it answered: killed and started again with the same command
// line, frozen (SIGSTOP) and resumed, or killed for good. Their lab is their
// own: its API servers go away.
const (
	blipObjects = 100
	blipWest    = "west"
	// blipKillAt is how many of west's objects exist when its API server
	// goes away: well into the apply, with most of west's still to come.
	blipKillAt = 15
)

var blipClusters = []string{"east", blipWest, "north"}

// blipRun is one apply (or plan) of a blip test: the terraform directory,
// the provider log (TF_LOG_PROVIDER=INFO, where the provider says when a
// cluster stopped answering and when it answered again) and the identities.
type blipRun struct {
	t   *testing.T
	lab *harness.Lab
	d   *tfDir
	who map[string]identity
	log string
}

func newBlipRun(t *testing.T, name string) *blipRun {
	t.Helper()
	l := startExtraLab(t, "blip", harness.Options{Names: blipClusters, AuditLog: true})
	who := map[string]identity{}
	for _, c := range l.Clusters {
		who[c.Name] = newIdentity(t, c, "blip")
	}
	d := newTFDir(t, "blip-"+name)
	return &blipRun{t: t, lab: l, d: d, who: who, log: filepath.Join(d.dir, "provider.log")}
}

// config is the provider, with reconnect_timeout when not "", and
// blipObjects objects named prefix-<cluster>-<i> on each cluster.
func (r *blipRun) config(prefix, reconnect string) {
	var b strings.Builder
	b.WriteString("provider \"zerotrust\" {\n")
	if reconnect != "" {
		fmt.Fprintf(&b, "  reconnect_timeout = %q\n", reconnect)
	}
	b.WriteString("  clusters = {\n")
	for _, c := range r.lab.Clusters {
		fmt.Fprintf(&b, "    %s = %s\n", c.Name, connection(c, r.who[c.Name].Token, "    "))
	}
	b.WriteString("  }\n}\n")
	for _, c := range r.lab.Clusters {
		b.WriteString(ftdsConfig(c.Name, prefix+"-"+c.Name, blipObjects))
	}
	r.d.write(b.String())
}

// bgRun is terraform running in the background.
type bgRun struct {
	out  bytes.Buffer
	done chan struct{}
	code int
}

// wait returns terraform's exit code once it has exited.
func (b *bgRun) wait() int {
	<-b.done
	return b.code
}

func (b *bgRun) exited() bool {
	select {
	case <-b.done:
		return true
	default:
		return false
	}
}

// start runs terraform with args in the background, logging the provider
// at INFO to r.log.
func (r *blipRun) start(args ...string) *bgRun {
	r.t.Helper()
	_ = os.Remove(r.log)
	b := &bgRun{done: make(chan struct{})}
	cmd := r.d.start(&b.out, []string{"TF_LOG_PROVIDER=INFO", "TF_LOG_PATH=" + r.log}, args...)
	go func() {
		defer close(b.done)
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			b.code = ee.ExitCode()
		} else if err != nil {
			b.code = -1
		}
	}()
	r.t.Cleanup(func() {
		if !b.exited() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	})
	return b
}

// waitObjects waits until c holds n objects named prefix-..., failing if
// terraform ends first.
func (r *blipRun) waitObjects(c *harness.Cluster, prefix string, n int, b *bgRun) {
	r.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		names, err := cftdNames(context.Background(), c, prefix+"-")
		if err == nil && len(names) >= n {
			return
		}
		if b.exited() {
			r.t.Fatalf("terraform exited (%d) before %d objects existed on %s:\n%s", b.code, n, c.Name, tail(b.out.String(), 40))
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("fewer than %d objects on %s after 3m:\n%s", n, c.Name, tail(b.out.String(), 40))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// outageLog is what the provider log says of west: whether it was found
// not answering, and after how long it answered again (when it did).
func (r *blipRun) outageLog() (stopped bool, answeredAfter []string) {
	r.t.Helper()
	data, err := os.ReadFile(r.log)
	if err != nil {
		r.t.Fatalf("provider log: %v", err)
	}
	after := regexp.MustCompile(`after=([0-9.a-zµ]+)`)
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(line, "cluster="+blipWest) {
			continue
		}
		switch {
		case strings.Contains(line, "cluster stopped answering"):
			stopped = true
		case strings.Contains(line, "cluster answers again"):
			if m := after.FindStringSubmatch(line); m != nil {
				answeredAfter = append(answeredAfter, m[1])
			}
		}
	}
	return stopped, answeredAfter
}

// checkAllOnce checks that each cluster holds its blipObjects objects, each
// once in state and on the cluster, and that west's API server created each
// at most once (one answer 201 to the provider in its audit log).
func (r *blipRun) checkAllOnce(prefix string) {
	r.t.Helper()
	inState := map[string]int{}
	for _, n := range r.d.stateNames() {
		inState[n]++
	}
	for _, c := range r.lab.Clusters {
		p := prefix + "-" + c.Name + "-"
		onCluster, err := cftdNames(context.Background(), c, p)
		if err != nil {
			r.t.Fatalf("listing %s: %v", c.Name, err)
		}
		stated := 0
		for n, k := range inState {
			if strings.HasPrefix(n, p) {
				stated++
				if k != 1 {
					r.t.Errorf("%s is %d times in state", n, k)
				}
			}
		}
		if len(onCluster) != blipObjects || stated != blipObjects {
			r.t.Errorf("cluster %s: %d objects on the cluster and %d in state, want %d", c.Name, len(onCluster), stated, blipObjects)
		}
	}
	created := createdBy(r.t, r.lab.Cluster(blipWest), r.who[blipWest].User, prefix+"-"+blipWest+"-")
	for name, n := range created {
		if n > 1 {
			r.t.Errorf("%s was created %d times on west", name, n)
		}
	}
}

// createdBy counts, per object named prefix..., the applies of user that
// c's API server answered 201 Created.
func createdBy(t *testing.T, c *harness.Cluster, user, prefix string) map[string]int {
	t.Helper()
	created := map[string]int{}
	eachAuditEvent(t, c, 0, func(ev auditEvent) bool {
		name := ev.RequestURI[strings.LastIndex(ev.RequestURI, "/")+1:]
		if i := strings.IndexByte(name, '?'); i >= 0 {
			name = name[:i]
		}
		if ev.User.Username == user && ev.Verb == "patch" && ev.ResponseStatus.Code == 201 && strings.HasPrefix(name, prefix) {
			created[name]++
		}
		return true
	})
	return created
}

type auditEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// eachAuditEvent calls f with each ResponseComplete event of c's audit log
// from byte offset from on, until f returns false; it returns the offset
// read to.
func eachAuditEvent(t *testing.T, c *harness.Cluster, from int64, f func(auditEvent) bool) int64 {
	t.Helper()
	file, err := os.Open(c.AuditLogPath())
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer file.Close()
	if _, err := file.Seek(from, 0); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	offset := from
	for sc.Scan() {
		offset += int64(len(sc.Bytes())) + 1
		var ev auditEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage != "ResponseComplete" {
			continue
		}
		if !f(ev) {
			break
		}
	}
	return offset
}

func auditSize(t *testing.T, c *harness.Cluster) int64 {
	t.Helper()
	fi, err := os.Stat(c.AuditLogPath())
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	return fi.Size()
}

// TestAccApplyRidesOutAPIServerRestart kills west's API server mid-apply and
// starts it again with the same command line a few seconds later: the
// apply must ride the refused connections out (exit 0, no error or
// warning), every object must exist once, and the plan after must be empty.
// Then a plan meets the same restart: west's API server is killed right
// after the plan's first request to it past the reachability probe (so the
// cluster answered in that run) and started again; the plan must ride it out too, and find nothing
// to change.
func TestAccApplyRidesOutAPIServerRestart(t *testing.T) {
	r := newBlipRun(t, "restart")
	west := r.lab.Cluster(blipWest)
	r.config("rs", "")
	began := time.Now()
	apply := r.start("apply", "-auto-approve", "-input=false", "-parallelism=4")
	r.waitObjects(west, "rs-"+blipWest, blipKillAt, apply)
	refused := restartAPIServer(t, west, 3*time.Second)
	code := apply.wait()
	took := time.Since(began)
	if code != 0 {
		t.Fatalf("apply through west's restart exited %d:\n%s", code, tail(apply.out.String(), 60))
	}
	checkQuietApply(t, apply.out.String())
	stopped, after := r.outageLog()
	if !stopped {
		t.Fatalf("the provider never found west not answering: the restart missed the apply's requests")
	}
	r.checkAllOnce("rs")
	r.d.expectEmptyPlan()
	t.Logf("apply through west's restart (refused %s): exit %d in %s, %d objects on each of %d clusters, each once; "+
		"west answered again after %v; plan after: no changes", refused.Round(100*time.Millisecond), code,
		took.Round(time.Second), blipObjects, len(blipClusters), after)
	blipNote(fmt.Sprintf("restart mid-apply (refused %s): exit 0, %d objects x %d clusters, plan after empty",
		refused.Round(100*time.Millisecond), blipObjects, len(blipClusters)))

	// The plan: kill west after its first answer to this run.
	from := auditSize(t, west)
	plan := r.start("plan", "-input=false", "-detailed-exitcode", "-parallelism=2")
	waitFirstRequest(t, west, r.who[blipWest].User, from, plan)
	refused = restartAPIServer(t, west, 3*time.Second)
	if code := plan.wait(); code != 0 {
		t.Fatalf("plan through west's restart exited %d (0 is no changes):\n%s", code, tail(plan.out.String(), 60))
	}
	checkQuietApply(t, plan.out.String())
	if stopped, after = r.outageLog(); !stopped {
		t.Fatalf("the plan never found west not answering: the restart missed its requests")
	}
	t.Logf("plan through west's restart (refused %s): exit 0, no changes; west answered again after %v",
		refused.Round(100*time.Millisecond), after)
	blipNote(fmt.Sprintf("restart mid-plan (refused %s): exit 0, no changes", refused.Round(100*time.Millisecond)))
}

// restartAPIServer kills c's API server, waits down, and starts it again
// with the same command line; it returns how long it did not answer.
func restartAPIServer(t *testing.T, c *harness.Cluster, down time.Duration) time.Duration {
	t.Helper()
	killed := time.Now()
	if err := c.StopAPIServer(); err != nil {
		t.Fatalf("killing %s's API server: %v", c.Name, err)
	}
	time.Sleep(down)
	if err := c.StartAPIServer(context.Background()); err != nil {
		t.Fatalf("starting %s's API server again: %v", c.Name, err)
	}
	return time.Since(killed)
}

// waitFirstRequest waits until c's audit log, from offset from on, shows
// an answer to a request of user's after its /version probe. The probe's
// own audit event is no proof that the provider heard the answer: the API
// server logs ResponseComplete before the body reaches the client, and a
// kill right then makes the probe fail with an unexpected EOF, so the
// cluster never answered in that run (a CI run of 39d0089 met exactly that).
// Every other request waits for the probe's answer (kube.Client.Reachable),
// so its audit event proves the provider heard the cluster.
func waitFirstRequest(t *testing.T, c *harness.Cluster, user string, from int64, b *bgRun) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		found := false
		from = eachAuditEvent(t, c, from, func(ev auditEvent) bool {
			found = ev.User.Username == user && !strings.HasPrefix(ev.RequestURI, "/version")
			return !found
		})
		if found {
			return
		}
		if b.exited() {
			t.Fatalf("terraform exited (%d) before it asked %s anything:\n%s", b.code, c.Name, tail(b.out.String(), 40))
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no request of %s reached %s within 2m:\n%s", user, c.Name, tail(b.out.String(), 40))
}

// TestAccApplyRidesOutFrozenAPIServer freezes west's API server (SIGSTOP)
// for 8 s mid-apply, then resumes it: the apply must end as if nothing
// happened.
func TestAccApplyRidesOutFrozenAPIServer(t *testing.T) {
	r := newBlipRun(t, "frozen")
	west := r.lab.Cluster(blipWest)
	r.config("fz", "")
	began := time.Now()
	apply := r.start("apply", "-auto-approve", "-input=false", "-parallelism=4")
	r.waitObjects(west, "fz-"+blipWest, blipKillAt, apply)
	if err := west.FreezeAPIServer(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(8 * time.Second)
	if err := west.ThawAPIServer(); err != nil {
		t.Fatal(err)
	}
	if code := apply.wait(); code != 0 {
		t.Fatalf("apply through west's freeze exited %d:\n%s", code, tail(apply.out.String(), 60))
	}
	checkQuietApply(t, apply.out.String())
	r.checkAllOnce("fz")
	r.d.expectEmptyPlan()
	t.Logf("apply through an 8 s freeze of west: exit 0 in %s, %d objects on each of %d clusters, each once; plan after: no changes",
		time.Since(began).Round(time.Second), blipObjects, len(blipClusters))
	blipNote(fmt.Sprintf("8 s freeze mid-apply: exit 0, %d objects x %d clusters, plan after empty", blipObjects, len(blipClusters)))
}

// TestAccApplyFailsAfterReconnectTimeout kills west's API server mid-apply
// for good, with reconnect_timeout = "10s": the apply must fail within
// about that bound of the kill, with "Cluster Stopped Answering" naming
// west and the wait, while east and north are applied in full; once west
// runs again, the next apply must converge.
func TestAccApplyFailsAfterReconnectTimeout(t *testing.T) {
	const bound = 10 * time.Second
	r := newBlipRun(t, "gone")
	west := r.lab.Cluster(blipWest)
	r.config("gn", bound.String())
	apply := r.start("apply", "-auto-approve", "-input=false", "-parallelism=4")
	r.waitObjects(west, "gn-"+blipWest, blipKillAt, apply)
	killed := time.Now()
	if err := west.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	code := apply.wait()
	took := time.Since(killed)
	text := apply.out.String()
	if code == 0 {
		t.Fatalf("the apply succeeded with west's API server gone:\n%s", tail(text, 40))
	}
	stopped := strings.Count(text, "Error: Cluster Stopped Answering")
	if stopped == 0 || !strings.Contains(text, `cluster "west"`) {
		t.Errorf("want \"Cluster Stopped Answering\" errors naming west:\n%s", tail(text, 60))
	}
	// Every error is west's. One CI run (of 5d1ce30) also met an error of
	// another title, which the test's output did not show: those are logged
	// in full, to be told apart, and must name west too.
	if others := otherErrors(text, "Error: Cluster Stopped Answering"); others != "" {
		t.Logf("errors other than \"Cluster Stopped Answering\":\n%s", others)
		for _, block := range strings.Split(others, "\n--\n") {
			if !strings.Contains(block, "gn-west") && !strings.Contains(block, `"west"`) {
				t.Errorf("an error that does not name west:\n%s", block)
			}
		}
	}
	var longest time.Duration
	for _, m := range regexp.MustCompile(`waited ([0-9.]+m?s)`).FindAllStringSubmatch(text, -1) {
		if d, err := time.ParseDuration(m[1]); err == nil && d > longest {
			longest = d
		}
	}
	if longest < bound || longest > bound+3*time.Second {
		t.Errorf("the errors say west was waited for %s at most, want about the bound of %s", longest, bound)
	}
	for _, name := range []string{"east", "north"} {
		onCluster, err := cftdNames(context.Background(), r.lab.Cluster(name), "gn-"+name+"-")
		if err != nil || len(onCluster) != blipObjects {
			t.Errorf("%s holds %d objects (%v), want all %d applied while west was gone", name, len(onCluster), err, blipObjects)
		}
	}
	t.Logf("west killed for good mid-apply: exit %d %s after the kill (bound %s, longest wait %s), %d \"Cluster Stopped Answering\" errors",
		code, took.Round(100*time.Millisecond), bound, longest, stopped)

	if err := west.StartAPIServer(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkQuietApply(t, r.d.mustApply(nil, "-parallelism=10"))
	r.checkAllOnce("gn")
	r.d.expectEmptyPlan()
	t.Logf("after west's restart the next apply converged: %d objects on each cluster, plan after empty", blipObjects)
	blipNote(fmt.Sprintf("killed for good mid-apply: failed %s after the kill (reconnect_timeout %s, %d errors), next apply converged",
		took.Round(100*time.Millisecond), bound, stopped))
}

// blipNote adds a part to the suite's summary line.
func blipNote(s string) {
	blipMu.Lock()
	defer blipMu.Unlock()
	blipNotes = append(blipNotes, s)
	sort.Strings(blipNotes)
}

// otherErrors is each error of a Terraform output other than those whose
// first line is want, with the 14 lines that follow it.
func otherErrors(text, want string) string {
	lines := strings.Split(text, "\n")
	var b strings.Builder
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "Error: ") && strings.TrimSpace(line) != want {
			if b.Len() > 0 {
				b.WriteString("\n--\n")
			}
			b.WriteString(strings.Join(lines[i:min(i+15, len(lines))], "\n"))
		}
	}
	return b.String()
}
