package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// Time-to-trust and time-to-heal: "SPIRE holds the peer's bundle" is what the
// provider controls; what a platform wants is that workloads of every cluster
// complete mTLS handshakes with those of every other. Each cluster gets what
// a platform team would have deployed before federating: a k8s_psat agent,
// and a Pod whose workload (a go-spiffe mTLS server) is running and waiting
// for its SVID. The apply then creates, besides the federations, a
// ClusterSPIFFEID per cluster (zerotrust_cluster_spiffe_id, as
// examples/n-cluster-mesh does) whose entries federate with every peer; it
// comes after that cluster's federations and waits until SPIRE's entries
// for the selected pods carry them. The agent then issues the SVID and the
// workload serves.

const (
	// trustWaitCap bounds the wait, from the start of the apply, for every
	// ordered pair to complete a handshake; also how long a workload may wait
	// for its first SVID.
	trustWaitCap = 4 * time.Minute
	// trustDialers bounds the handshakes in flight: each is a process start
	// (the dialing workload, attested by its agent) on a 2-core machine that
	// also runs the apply being measured; 90 at once at 10 clusters would
	// measure the process table.
	trustDialers = 4
	// trustRetry is how soon a pair that failed is tried again.
	trustRetry = time.Second
	// healWaitCap bounds the wait, from the start of a repairing apply, for
	// every pair to handshake again.
	healWaitCap = 2 * time.Minute
	// healSettle is how long after a repairing apply (and its plan) the
	// pairs are checked once more: longer than a spire-agent's sync interval
	// (5 s), so every workload has the bundles SPIRE holds by then. A pair
	// that handshook during the apply, before the repair reached it, may
	// fail then.
	healSettle = 10 * time.Second
	// trustBreakWait bounds the wait for a heal case's damage to show as a
	// failed handshake (agents pass bundle changes on within seconds).
	trustBreakWait = 30 * time.Second

	trustNamespace      = "bench"
	trustServiceAccount = "web"
	trustCSID           = "bench-web"
	// trustTemplate is the usual per-ServiceAccount ClusterSPIFFEID template.
	trustTemplate = "spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}"
)

var trustLabels = map[string]string{"app": trustCSID}

// meshWorkloads are the pod workloads of one mesh: slot i is cluster i's,
// nil until it serves (it waits for its SVID).
type meshWorkloads struct {
	mu      sync.Mutex
	members []*meshMember
	agents  []*harness.SpireAgent
	ws      []*harness.Workload
	readyAt []time.Time // when each got its SVID and served; zero: not yet
	errs    []error
	// readyTimeout is how long a workload may wait for its first SVID
	// (trustWaitCap unless set).
	readyTimeout time.Duration
}

func (m *meshWorkloads) get(i int) *harness.Workload {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ws[i]
}

// start starts cluster i's pod workload (Pod name pod) in the background;
// it serves once SPIRE issues its SVID. It returns when the Pod exists.
func (m *meshWorkloads) start(ctx context.Context, i int, pod string) error {
	peers := meshPeers(m.members, i)
	allow := make([]string, len(peers))
	for j, td := range peers {
		allow[j] = "spiffe://" + td
	}
	td := m.members[i].spire.TrustDomain
	m.mu.Lock()
	m.ws[i], m.errs[i], m.readyAt[i] = nil, nil, time.Time{}
	agent, ready := m.agents[i], cmp.Or(m.readyTimeout, trustWaitCap)
	m.mu.Unlock()
	go func() {
		w, err := harness.StartPodWorkload(ctx, agent, harness.PodWorkloadOptions{
			Namespace: trustNamespace, Pod: pod, ServiceAccount: trustServiceAccount, Labels: trustLabels, Allow: allow,
			SPIFFEID:     fmt.Sprintf("spiffe://%s/ns/%s/sa/%s", td, trustNamespace, trustServiceAccount),
			ReadyTimeout: ready,
		})
		m.mu.Lock()
		defer m.mu.Unlock()
		m.ws[i], m.errs[i] = w, err
		if err == nil {
			m.readyAt[i] = time.Now()
		}
	}()
	cs, err := kubernetes.NewForConfig(m.members[i].cluster.RESTConfig())
	if err != nil {
		return err
	}
	// The first workload of the process builds ztworkload (go build), so
	// this wait is generous; it ends as soon as the Pod exists.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		_, err := cs.CoreV1().Pods(trustNamespace).Get(ctx, pod, metav1.GetOptions{})
		if err == nil {
			return nil
		}
		m.mu.Lock()
		werr := m.errs[i]
		m.mu.Unlock()
		if werr != nil {
			return werr
		}
		if !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			return fmt.Errorf("%s: Pod %s/%s: %w", m.members[i].cluster.Name, trustNamespace, pod, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func newMeshWorkloads(members []*meshMember) *meshWorkloads {
	k := len(members)
	return &meshWorkloads{
		members: members, agents: make([]*harness.SpireAgent, k), ws: make([]*harness.Workload, k),
		readyAt: make([]time.Time, k), errs: make([]error, k),
	}
}

// startAll starts a k8s_psat agent on every member (in parallel), then every
// member's pod workload (start); names end in suffix.
func (m *meshWorkloads) startAll(ctx context.Context, suffix string) error {
	return m.startFirst(ctx, suffix, len(m.members))
}

// startFirst starts a k8s_psat agent on every member (in parallel), then
// the pod workloads of the first k members; names end in suffix.
func (m *meshWorkloads) startFirst(ctx context.Context, suffix string, k int) error {
	var (
		wg   sync.WaitGroup
		errs = make([]error, len(m.members))
	)
	for i, mm := range m.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := harness.StartSpireAgentWith(ctx, mm.spire, harness.SpireAgentOptions{Name: "bench-" + suffix, K8sPSAT: true})
			m.mu.Lock()
			m.agents[i], errs[i] = a, err
			m.mu.Unlock()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i := range k {
		if err := m.start(ctx, i, "web-"+suffix); err != nil {
			return err
		}
	}
	return nil
}

// stopAll stops every workload and agent.
func (m *meshWorkloads) stopAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, w := range m.ws {
		if w != nil {
			if err := w.Stop(); err != nil {
				logf("clusters: %v", err)
			}
		}
	}
	for _, a := range m.agents {
		if a != nil {
			if err := a.Stop(); err != nil {
				logf("clusters: %v", err)
			}
		}
	}
}

func meshPeers(members []*meshMember, i int) []string {
	var tds []string
	for j, m := range members {
		if j != i {
			tds = append(tds, m.spire.TrustDomain)
		}
	}
	return tds
}

// pairPoll handshakes every ordered pair of workloads, from start, until each
// pair has completed one handshake or the limit passes. A pair is tried once
// both of its workloads serve, then again trustRetry after each failure.
type pairPoll struct {
	cancel context.CancelFunc
	done   chan struct{}
	all    time.Duration   // when the last pair completed its first handshake
	each   []time.Duration // per pair, when it completed its first handshake
	dials  int
	err    error
}

func startPairPoll(ctx context.Context, ws *meshWorkloads, start time.Time, limit time.Duration) *pairPoll {
	return startPairPollOf(ctx, ws, len(ws.members), start, limit)
}

// startPairPollOf is startPairPoll for the pairs among ws's first k
// members only (the mesh before a join).
func startPairPollOf(ctx context.Context, ws *meshWorkloads, k int, start time.Time, limit time.Duration) *pairPoll {
	return startPairPollWhere(ctx, ws, start, limit, func(i, j int) bool { return i < k && j < k })
}

// startPairPollWhere is startPairPoll for the ordered pairs (from, to) of
// ws's members that keep accepts.
func startPairPollWhere(ctx context.Context, ws *meshWorkloads, start time.Time, limit time.Duration, keep func(from, to int) bool) *pairPoll {
	ctx, cancel := context.WithDeadline(ctx, start.Add(limit))
	p := &pairPoll{cancel: cancel, done: make(chan struct{})}
	type pair struct {
		from, to int
		done     time.Duration
		busy     bool
		next     time.Time
		last     string
	}
	var (
		mu    sync.Mutex
		pairs []*pair
		wg    sync.WaitGroup
	)
	for i := range ws.members {
		for j := range ws.members {
			if i != j && keep(i, j) {
				pairs = append(pairs, &pair{from: i, to: j})
			}
		}
	}
	sem := make(chan struct{}, trustDialers)
	go func() {
		defer close(p.done)
		defer cancel()
		defer wg.Wait()
		for {
			mu.Lock()
			left := 0
			for _, pr := range pairs {
				if pr.done > 0 {
					continue
				}
				left++
				from, to := ws.get(pr.from), ws.get(pr.to)
				if pr.busy || from == nil || to == nil || time.Now().Before(pr.next) {
					continue
				}
				select {
				case sem <- struct{}{}:
				default:
					continue
				}
				pr.busy = true
				p.dials++
				wg.Add(1)
				go func() {
					defer wg.Done()
					ok, detail := harness.CheckMTLS(ctx, from, to)
					mu.Lock()
					pr.busy = false
					if ok {
						pr.done = time.Since(start)
					} else {
						pr.next, pr.last = time.Now().Add(trustRetry), detail
					}
					mu.Unlock()
					<-sem
				}()
			}
			if left == 0 {
				for _, pr := range pairs {
					p.all = max(p.all, pr.done)
					p.each = append(p.each, pr.done)
				}
				mu.Unlock()
				return
			}
			mu.Unlock()
			select {
			case <-ctx.Done():
				mu.Lock()
				var lacking []string
				for _, pr := range pairs {
					if pr.done == 0 {
						why := pr.last
						if ws.get(pr.from) == nil || ws.get(pr.to) == nil {
							why = "a workload has no SVID yet"
						}
						lacking = append(lacking, fmt.Sprintf("%s->%s: %s", ws.members[pr.from].cluster.Name, ws.members[pr.to].cluster.Name, why))
					}
				}
				mu.Unlock()
				sort.Strings(lacking)
				count := len(lacking)
				if count > 3 {
					lacking = append(lacking[:3], fmt.Sprintf("and %d more", count-3))
				}
				p.err = fmt.Errorf("%d ordered pairs had not handshaken %.0f s after the apply started (%v): %s",
					count, time.Since(start).Seconds(), ctx.Err(), strings.Join(lacking, "; "))
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return p
}

func (p *pairPoll) wait() (time.Duration, int, error) {
	<-p.done
	return p.all, p.dials, p.err
}

func (p *pairPoll) stop() {
	p.cancel()
	<-p.done
}

// meshTrust is the time-to-trust run of a row, after its timed cycles, on
// clean clusters: workloads first, then one apply of the mesh (the row's
// configuration in dir, with the ClusterSPIFFEIDs), timed until every
// ordered pair handshakes. With
// heal, the heal cases follow on the same mesh. It returns the heal cases;
// the error means the clusters are not clean afterwards.
func meshTrust(ctx context.Context, env *tfEnv, opts options, dir string, members []*meshMember, row *ClusterScaleRow, heal bool) ([]HealCase, error) {
	k := len(members)
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		row.TrustError = strings.TrimPrefix(row.TrustError+"; "+msg, "; ")
		logf("clusters %d: time to trust: %s", k, msg)
	}
	ws := newMeshWorkloads(members)
	var cases []HealCase
	err := func() error {
		// The row's configuration plus the ClusterSPIFFEIDs, created in the
		// same apply as the federations.
		if err := writeMeshConfig(env, dir, members, true); err != nil {
			return err
		}
		// The Pods exist and their workloads wait for SVIDs before the apply,
		// as in a platform whose applications were deployed first.
		if err := ws.startAll(ctx, fmt.Sprintf("k%d", k)); err != nil {
			return err
		}
		start := time.Now()
		poll := startPairPoll(ctx, ws, start, trustWaitCap)
		// Where the provider's part ends: every SPIRE server holds every
		// peer bundle. The rest is spire-controller-manager, the agents
		// and the workloads.
		bundles := startBundlePoll(ctx, members, start, trustWaitCap)
		s, out, err := env.measured(ctx, dir, opts.timeout, phaseArgs["apply"]...)
		row.TrustApplyWall = round3(s.Wall)
		if err != nil {
			poll.stop()
			bundles.stop()
			return fmt.Errorf("apply: %v: %s", err, tail(out, 20))
		}
		if held, _, err := bundles.wait(); err == nil {
			row.TrustBundlesHeld = round3(held.Seconds())
		}
		all, dials, err := poll.wait()
		row.TrustPairs, row.TrustDials = k*(k-1), dials
		ws.mu.Lock()
		for i, at := range ws.readyAt {
			if !at.IsZero() {
				row.TrustWorkloadsServing = max(row.TrustWorkloadsServing, round3(at.Sub(start).Seconds()))
			}
			if ws.errs[i] != nil {
				fail("%s: %v", members[i].cluster.Name, ws.errs[i])
			}
		}
		ws.mu.Unlock()
		if err != nil {
			return err
		}
		row.TimeToTrust = round3(all.Seconds())
		row.TrustClusterSPIFFEIDsInApply = true
		logf("clusters %d: time to trust %.1f s (apply %.1f s, all bundles held at %.1f s, last workload serving at %.1f s, %d handshakes for %d pairs)",
			k, row.TimeToTrust, row.TrustApplyWall, row.TrustBundlesHeld, row.TrustWorkloadsServing, dials, row.TrustPairs)
		if heal {
			cases = healCases(ctx, env, opts, dir, ws)
		}
		return nil
	}()
	if err != nil {
		fail("%v", err)
	}
	ws.stopAll()
	if err := trustCleanup(ctx, env, opts, dir, members); err != nil {
		return cases, fmt.Errorf("clusters %d: after the time-to-trust run: %w", k, err)
	}
	return cases, nil
}

// trustCleanup removes what meshTrust added (Pods, and ClusterSPIFFEIDs a
// failed apply may have left outside the state; their entries go with them)
// and destroys the mesh and its ClusterSPIFFEIDs, untimed (a failed apply may
// have created part of it).
func trustCleanup(ctx context.Context, env *tfEnv, opts options, dir string, members []*meshMember) error {
	var errs []error
	for _, m := range members {
		dyn, err := dynamic.NewForConfig(m.cluster.RESTConfig())
		if err != nil {
			return err
		}
		if err := dyn.Resource(harness.ClusterSPIFFEIDResource).Delete(ctx, trustCSID, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
		cs, err := kubernetes.NewForConfig(m.cluster.RESTConfig())
		if err != nil {
			return err
		}
		if err := cs.CoreV1().Pods(trustNamespace).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: new(int64)},
			metav1.ListOptions{LabelSelector: "app=" + trustCSID}); err != nil {
			errs = append(errs, err)
		}
	}
	if out, err := env.tf(ctx, dir, opts.timeout, phaseArgs["destroy"]...); err != nil {
		errs = append(errs, fmt.Errorf("terraform destroy: %w\n%s", err, tail(out, 40)))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return meshClean(ctx, members, meshCleanWait)
}
