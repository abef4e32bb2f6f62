package examplestest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// "Federation through published bundles": three clusters whose SPIRE, laid
// out as the SPIFFE Helm chart does, serves no bundle endpoint and publishes
// its bundle with SPIRE's real BundlePublisher "aws_s3" to the lab's object
// storage (zts3, HTTPS with a CA the SPIRE servers trust); one apply of
// zerotrust_federated_trust_domain with the https_web profile pointed at
// each peer's object federates them, and from then on SPIRE moves every
// bundle change by itself: rotations need no apply.

// publishedRefreshHint is the publishers' refresh_hint: the shortest SPIRE's
// readers honour (bundleutil.MinimumRefreshHint clamps a shorter one, 5s
// included, to 1m), so peers poll the object every 15 s, a quarter of it.
const publishedRefreshHint = time.Minute

// publishedMesh is the clusters (east first, the one that rotates), the
// object storage, their SPIRE servers, workloads, and the configuration's
// directory.
type publishedMesh struct {
	s3        *harness.S3
	spires    []*harness.Spire
	workloads []*harness.Workload
	dir       string
	// op is the operator-layout cluster's SPIRE server and workload, which
	// joins in the mixed_fleet subtest; its workload's server accepts the
	// chart clusters' workloads and theirs accept it from the start.
	op         *harness.Spire
	opWorkload *harness.Workload
	vars       map[string]any
}

// publishedConfig federates every ordered pair of var.clusters from the
// peer's published object. No trust_domain_bundle: the first https_web
// fetch needs none, and wait_for_bundle ends the apply once SPIRE holds the
// peer's bundle.
const publishedConfig = `
terraform {
  required_providers {
    zerotrust = { source = "ztfabric/zerotrust" }
  }
}

variable "clusters" {
  type = map(object({
    config_path   = string
    trust_domain  = string
    published_url = string
  }))
}

# Clusters whose SPIRE comes from the OpenShift operator: its server.conf
# has no BundlePublisher, so they consume the published bundles and the
# courier carries their own bundle to the chart clusters.
variable "operator_clusters" {
  type = map(object({
    config_path  = string
    trust_domain = string
  }))
  default = {}
}

provider "zerotrust" {
  clusters = merge(
    { for name, c in var.clusters : name => { config_path = c.config_path, config_context = name, spire = { install = "helm" } } },
    { for name, c in var.operator_clusters : name => { config_path = c.config_path, config_context = name } },
  )
}

locals {
  pairs = {
    for pair in setproduct(keys(var.clusters), keys(var.clusters)) :
    "${pair[0]}->${pair[1]}" => { cluster = pair[0], peer = pair[1] }
    if pair[0] != pair[1]
  }
  operator_pairs = {
    for pair in setproduct(keys(var.operator_clusters), keys(var.clusters)) :
    "${pair[0]}->${pair[1]}" => { cluster = pair[0], peer = pair[1] }
  }
}

data "zerotrust_trust_bundle" "operator" {
  for_each = var.operator_clusters

  cluster      = each.key
  trust_domain = each.value.trust_domain
  spire_server = {}
}

resource "zerotrust_spire_bundle" "operator" {
  for_each = local.operator_pairs

  cluster      = each.value.peer
  trust_domain = var.operator_clusters[each.value.cluster].trust_domain
  bundle       = data.zerotrust_trust_bundle.operator[each.value.cluster].spiffe_bundle
}

# Every chart cluster, and every operator cluster, consumes every chart
# cluster's published bundle.
resource "zerotrust_federated_trust_domain" "peer" {
  for_each = merge(local.pairs, local.operator_pairs)

  cluster                 = each.value.cluster
  trust_domain            = var.clusters[each.value.peer].trust_domain
  bundle_endpoint_url     = var.clusters[each.value.peer].published_url
  bundle_endpoint_profile = { type = "https_web" }
  wait_for_bundle         = true
}
`

// TestAccPublishedBundleFederation: after one apply every ordered pair of
// workloads handshakes (the table is logged); a scheduled rotation of east's
// X.509 CA (prepare, activate, taint, revoke) while the pairs involving east
// handshake every second: 0 failed, no apply; a forced rotation (activate
// and taint right after prepare): every pair handshakes again without an
// apply, timed against the refresh hint; the object storage stopped for
// 20 s while east prepares an authority: the handshakes go on, the publish
// and the peers' polls fail meanwhile, and the peers hold the authority
// after the storage is back (timed). The plan stays empty throughout. Then
// a fourth cluster, its SPIRE laid out as the OpenShift operator does (no
// BundlePublisher), joins in a second apply: it consumes the three
// published bundles with https_web, the courier carries its own bundle to
// them, and every pair involving it handshakes.
func TestAccPublishedBundleFederation(t *testing.T) {
	t.Parallel()
	m := startPublishedMesh(t, []string{"pbeast", "pbwest", "pbnorth"}, "pbop")
	t.Run("scheduled_rotation", func(t *testing.T) { m.scheduledRotation(t) })
	t.Run("forced_rotation", func(t *testing.T) { m.forcedRotation(t) })
	t.Run("bucket_outage", func(t *testing.T) { m.bucketOutage(t) })
	planEmpty(t, m.dir, "after the rotations and the outage: nothing for Terraform to carry")
	t.Run("mixed_fleet", func(t *testing.T) { m.mixedFleet(t) })
}

// startPublishedMesh starts the clusters, the object storage, SPIRE servers
// without bundle endpoints publishing to it, an agent and workload per
// server, applies publishedConfig and waits until every ordered pair
// handshakes.
func startPublishedMesh(t *testing.T, names []string, operator string) *publishedMesh {
	t.Helper()
	ctx := context.Background()
	began := time.Now()
	var clusters []*harness.Cluster
	for _, n := range append(slices.Clone(names), operator) {
		clusters = append(clusters, acctest.OwnCluster(t, n))
	}
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	s3, err := harness.StartS3(startCtx, harness.S3Options{Dir: filepath.Join(t.TempDir(), "s3")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s3.Stop(); err != nil {
			t.Error(err)
		}
	})
	spires, err := harness.StartSpires(startCtx, clusters, func(c *harness.Cluster) harness.SpireOptions {
		o := harness.SpireOptions{TrustDomain: c.Name + ".zt.test", ControllerManager: true, X509SVIDTTL: rotationSVIDTTL, NoBundleEndpoint: true}
		if c.Name == operator {
			o.WebPKIRoots = s3.CACertFile
		} else {
			o.Helm, o.S3Publisher = true, &harness.S3Publisher{Server: s3, RefreshHint: publishedRefreshHint}
		}
		return o
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range spires {
		t.Cleanup(func() {
			if err := s.Stop(); err != nil {
				t.Error(err)
			}
		})
	}
	expectNoBundleEndpoints(t, spires)
	workloads := startMeshWorkloads(ctx, t, spires)
	n := len(names)
	m := &publishedMesh{s3: s3, spires: spires[:n], workloads: workloads[:n], op: spires[n], opWorkload: workloads[n], dir: t.TempDir()}
	clustersVar := map[string]any{}
	for _, s := range m.spires {
		clustersVar[s.Cluster.Name] = map[string]string{"config_path": s.Cluster.Kubeconfig, "trust_domain": s.TrustDomain, "published_url": s.PublishedBundleURL}
		t.Logf("%s publishes to %s", s.TrustDomain, s.PublishedBundleURL)
	}
	m.vars = map[string]any{"clusters": clustersVar}
	m.writeVars(t)
	if err := os.WriteFile(filepath.Join(m.dir, "main.tf"), []byte(publishedConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if out, code := terraform(t, m.dir, "destroy", "-auto-approve", "-no-color"); code != 0 {
			t.Errorf("cleanup: terraform destroy exited %d:\n%s", code, out)
		}
	})
	t.Logf("clusters, object storage, SPIRE servers and workloads up in %v", time.Since(began).Round(100*time.Millisecond))
	start := time.Now()
	out := mustTerraform(t, m.dir, "apply", "-auto-approve", "-no-color")
	applied := time.Since(start)
	if !strings.Contains(out, "Resources: 6 added") {
		t.Errorf("the apply did not add the 6 federations:\n%s", out)
	}
	federateWorkloads(ctx, t, m.workloads, m.spires)
	results := everyPair(ctx, m.workloads, true, mtlsTimeout)
	failed := failedPairs(results)
	t.Logf("published-bundle mesh of %v: apply %v (6 federations, wait_for_bundle), %d of %d ordered pairs handshake %v after the apply began:%s",
		names, applied.Round(100*time.Millisecond), len(results)-failed, len(results), time.Since(start).Round(100*time.Millisecond), pairTable(results))
	if failed > 0 {
		t.FailNow()
	}
	planEmpty(t, m.dir, "after the first apply")
	return m
}

// writeVars writes m.vars as the configuration's variables.
func (m *publishedMesh) writeVars(t *testing.T) {
	t.Helper()
	data, err := json.Marshal(m.vars)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.dir, "terraform.tfvars.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// pairTable lists each pair's outcome, a line each.
func pairTable(results []pairResult) string {
	var b strings.Builder
	for _, r := range results {
		outcome := "ok"
		if r.err != nil {
			outcome = "FAILED: " + r.err.Error()
		}
		fmt.Fprintf(&b, "\n  %-38s -> %-38s %s", r.from.SPIFFEID, r.to.SPIFFEID, outcome)
	}
	return b.String()
}

func failedPairs(results []pairResult) int {
	n := 0
	for _, r := range results {
		if r.err != nil {
			n++
		}
	}
	return n
}

// east's workload, its SPIRE server, and the pairs involving it.
func (m *publishedMesh) east() (*harness.Spire, *harness.Workload) {
	return m.spires[east], m.workloads[east]
}

func (m *publishedMesh) pairsWithEast() []pairResult {
	var pairs []pairResult
	for _, p := range orderedPairs(m.workloads) {
		if p.from == m.workloads[east] || p.to == m.workloads[east] {
			pairs = append(pairs, p)
		}
	}
	return pairs
}

// peersHold reports whether every peer's SPIRE server and workload holds
// (want true) or no longer holds (want false) authority in east's bundle.
func (m *publishedMesh) peersHold(ctx context.Context, authority string, want bool) (bool, string) {
	td := m.spires[east].TrustDomain
	var waiting []string
	for j, s := range m.spires {
		if j == east {
			continue
		}
		auths, err := s.BundleX509Authorities(ctx, td)
		if err != nil {
			waiting = append(waiting, err.Error())
		} else if slices.ContainsFunc(auths, func(a harness.X509Authority) bool { return a.ID == authority }) != want {
			waiting = append(waiting, fmt.Sprintf("SPIRE %s holds %v", s.TrustDomain, auths))
		}
		v, err := m.workloads[j].Show(ctx)
		if err != nil {
			waiting = append(waiting, err.Error())
		} else if slices.Contains(v.Bundles[td], authority) != want {
			waiting = append(waiting, fmt.Sprintf("workload %s holds %v", v.SPIFFEID, v.Bundles[td]))
		}
	}
	return len(waiting) == 0, strings.Join(waiting, "; ")
}

// svidFrom waits until east's workload holds an SVID of authority.
func (m *publishedMesh) svidFrom(t *testing.T, authority string) {
	t.Helper()
	_, w := m.east()
	waitFor(t, "east's workload to hold an SVID of "+authority, rotationSVIDTTL+propagationTimeout, func(ctx context.Context) (bool, string) {
		v, err := w.Show(ctx)
		if err != nil {
			return false, err.Error()
		}
		return v.SVIDAuthority == authority, "SVID of " + v.SVIDAuthority
	})
}

func (m *publishedMesh) eastAuthority(t *testing.T) string {
	t.Helper()
	_, w := m.east()
	v, err := w.Show(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return v.SVIDAuthority
}

// scheduledRotation rotates east's CA as SPIRE's CA manager does on its own,
// with nothing but SPIRE moving the bundle: no apply.
func (m *publishedMesh) scheduledRotation(t *testing.T) {
	ctx := context.Background()
	s, _ := m.east()
	old := m.eastAuthority(t)
	p := startProber(t, m.pairsWithEast())
	start := time.Now()
	prepared, err := s.PrepareX509Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held := waitFor(t, "the peers to hold the prepared authority from the object", propagationTimeout,
		func(ctx context.Context) (bool, string) { return m.peersHold(ctx, prepared, true) })
	if err := s.ActivateX509Authority(ctx, prepared); err != nil {
		t.Fatal(err)
	}
	m.svidFrom(t, prepared)
	if err := s.TaintX509Authority(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeX509Authority(ctx, old); err != nil {
		t.Fatal(err)
	}
	dropped := waitFor(t, "the peers to drop the revoked authority", propagationTimeout,
		func(ctx context.Context) (bool, string) { return m.peersHold(ctx, old, false) })
	rounds, attempts, failures := p.stop()
	t.Logf("scheduled rotation of %s through the published bundle, no apply: %v from prepare until the peers dropped the old authority "+
		"(peers held the prepared one after %v, dropped the revoked one %v after revoke; refresh_hint %v, a poll every %v); "+
		"%d handshakes in %d rounds, %d failed", s.TrustDomain, time.Since(start).Round(100*time.Millisecond), held, dropped,
		publishedRefreshHint, publishedRefreshHint/4, attempts, rounds, len(failures))
	if attempts == 0 {
		t.Fatal("the prober ran no handshake")
	}
	for _, f := range failures {
		t.Errorf("handshake failed during the scheduled rotation: +%v %s -> %s: %s", f.at.Round(100*time.Millisecond), f.from, f.to, f.detail)
	}
	planEmpty(t, m.dir, "after the scheduled rotation")
}

// forcedRotation activates a prepared authority and taints the old one as
// soon as east's own agent holds it, without waiting for the peers: the
// pairs recover when the peers' next poll of the object brings it, with no
// apply.
func (m *publishedMesh) forcedRotation(t *testing.T) {
	ctx := context.Background()
	s, w := m.east()
	old := m.eastAuthority(t)
	prepared, err := s.PrepareX509Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	preparedAt := time.Now()
	// East's own agent must sync the prepared authority before the server's
	// SVID moves to it (see forceRotation in rotation_test.go).
	waitHoldsAuthority(t, "east's own workload", w, s.TrustDomain, prepared)
	if err := s.ActivateX509Authority(ctx, prepared); err != nil {
		t.Fatal(err)
	}
	if err := s.TaintX509Authority(ctx, old); err != nil {
		t.Fatal(err)
	}
	forcedAt := time.Now()
	// Probed every second from the taint: the failures say how long the
	// pairs involving east were broken.
	p := startProber(t, m.pairsWithEast())
	held := make(chan time.Duration, 1)
	go func() {
		for time.Since(forcedAt) < propagationTimeout {
			if ok, _ := m.peersHold(ctx, prepared, true); ok {
				held <- time.Since(preparedAt)
				return
			}
			time.Sleep(500 * time.Millisecond)
		}
		held <- -1
	}()
	m.svidFrom(t, prepared)
	expectEveryPair(ctx, t, m.workloads, "after the forced rotation, without an apply")
	recovered := time.Since(forcedAt)
	peersAfter := <-held
	rounds, attempts, failures := p.stop()
	var lastFailure time.Duration
	for _, f := range failures {
		lastFailure = max(lastFailure, f.at)
	}
	t.Logf("forced rotation of %s (activate and taint %v after prepare), no apply: every one of %d pairs handshakes %v after the taint; "+
		"probing the pairs involving east every second from the taint, %d of %d handshakes in %d rounds failed, the last %v after the taint; "+
		"the peers held the new authority %v after prepare (refresh_hint %v: a poll every %v, at most one poll after the publish at prepare)",
		s.TrustDomain, forcedAt.Sub(preparedAt).Round(100*time.Millisecond), len(orderedPairs(m.workloads)),
		recovered.Round(100*time.Millisecond), len(failures), attempts, rounds, lastFailure.Round(100*time.Millisecond),
		peersAfter.Round(100*time.Millisecond), publishedRefreshHint, publishedRefreshHint/4)
	if peersAfter < 0 {
		t.Errorf("the peers did not hold east's new authority within %v", propagationTimeout)
	}
	planEmpty(t, m.dir, "after the forced rotation")
}

// bucketOutage stops the object storage for bucketDown while east prepares
// a new authority: SPIRE cannot publish it and the peers cannot poll, but
// they keep the bundles they hold, so every pair keeps handshaking. With
// the storage back, SPIRE's next publish (its 30 s timer) and the peers'
// next poll bring the prepared authority.
func (m *publishedMesh) bucketOutage(t *testing.T) {
	const bucketDown = 20 * time.Second
	ctx := context.Background()
	s, _ := m.east()
	publishFailed := func() int {
		return strings.Count(readLog(t, s.LogPath()), `level=error msg="Failed to publish bundle" BundlePublisher=aws_s3`)
	}
	pollsFailed := func() []int {
		var n []int
		for _, peer := range m.spires[1:] {
			n = append(n, strings.Count(readLog(t, peer.LogPath()), `msg="Error updating bundle"`))
		}
		return n
	}
	publishesBefore, pollsBefore := publishFailed(), pollsFailed()
	p := startProber(t, orderedPairs(m.workloads))
	if err := m.s3.StopServer(); err != nil {
		t.Fatal(err)
	}
	stoppedAt := time.Now()
	prepared, err := s.PrepareX509Authority(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// What Terraform sees meanwhile: nothing to do; its warnings are logged.
	planStart := time.Now()
	out, code := terraform(t, m.dir, "plan", "-detailed-exitcode", "-no-color")
	var warnings []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Warning: ") && !strings.Contains(line, "development overrides") {
			warnings = append(warnings, strings.TrimPrefix(line, "Warning: "))
		}
	}
	t.Logf("terraform plan with the object storage down: exit %d in %v, warnings %q", code, time.Since(planStart).Round(100*time.Millisecond), warnings)
	if code != 0 {
		t.Errorf("terraform plan with the object storage down exited %d, want 0 (no change):\n%s", code, out)
	}
	time.Sleep(bucketDown - time.Since(stoppedAt))
	publishFailures := publishFailed() - publishesBefore
	var pollFailures []string
	for i, n := range pollsFailed() {
		pollFailures = append(pollFailures, fmt.Sprintf("%s %d", m.spires[1+i].TrustDomain, n-pollsBefore[i]))
		if n == pollsBefore[i] {
			t.Errorf("%s logged no failed poll of %s's object while the object storage was down", m.spires[1+i].TrustDomain, s.TrustDomain)
		}
	}
	if ok, _ := m.peersHold(ctx, prepared, true); ok {
		t.Errorf("the peers hold east's authority prepared while the object storage was down")
	}
	if err := m.s3.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	backAt := time.Now()
	healed := waitFor(t, "the peers to hold the authority prepared during the outage", 2*propagationTimeout,
		func(ctx context.Context) (bool, string) { return m.peersHold(ctx, prepared, true) })
	rounds, attempts, failures := p.stop()
	t.Logf("object storage down %v while %s prepared an authority: %d failed publishes by %s, failed polls %v (SPIRE's logs); "+
		"%d handshakes of every pair in %d rounds, %d failed; the peers held the prepared authority %v after the storage was back",
		backAt.Sub(stoppedAt).Round(100*time.Millisecond), s.TrustDomain, publishFailures, s.TrustDomain, pollFailures,
		attempts, rounds, len(failures), healed)
	if publishFailures == 0 {
		t.Errorf("%s logged no failed publish while the object storage was down", s.TrustDomain)
	}
	for _, f := range failures {
		t.Errorf("handshake failed during the outage: +%v %s -> %s: %s", f.at.Round(100*time.Millisecond), f.from, f.to, f.detail)
	}
}

func readLog(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// mixedFleet adds the operator-layout cluster: a second apply makes its
// SPIRE consume every chart cluster's published bundle (https_web, no
// bundle to start from) and carries its own bundle, read from its SPIRE
// server, into theirs; every pair involving it then handshakes.
func (m *publishedMesh) mixedFleet(t *testing.T) {
	ctx := context.Background()
	m.vars["operator_clusters"] = map[string]any{m.op.Cluster.Name: map[string]string{
		"config_path": m.op.Cluster.Kubeconfig, "trust_domain": m.op.TrustDomain,
	}}
	m.writeVars(t)
	start := time.Now()
	out := mustTerraform(t, m.dir, "apply", "-auto-approve", "-no-color")
	applied := time.Since(start)
	if !strings.Contains(out, "Resources: 6 added, 0 changed, 0 destroyed") {
		t.Errorf("the apply adding %s did not add its 3 federations and the 3 bundles carried to the chart clusters:\n%s", m.op.Cluster.Name, out)
	}
	all := append(slices.Clone(m.workloads), m.opWorkload)
	spires := append(slices.Clone(m.spires), m.op)
	federateWorkloads(ctx, t, all, spires)
	var involving []pairResult
	for _, r := range everyPair(ctx, all, true, mtlsTimeout) {
		if r.from == m.opWorkload || r.to == m.opWorkload {
			involving = append(involving, r)
		}
	}
	t.Logf("mixed fleet: %s (operator layout, no BundlePublisher) consumes the 3 published bundles and gets its own carried by the courier: "+
		"apply %v, %d of %d pairs involving it handshake %v after the apply began:%s", m.op.TrustDomain, applied.Round(100*time.Millisecond),
		len(involving)-failedPairs(involving), len(involving), time.Since(start).Round(100*time.Millisecond), pairTable(involving))
	if failedPairs(involving) > 0 {
		t.Fail()
	}
	planEmpty(t, m.dir, "after the operator cluster joined")
}
