//go:build benchmodes

package examplestest

// The three ways to federate on the same three clusters, one after the
// other, timed the same way (make bench-modes; the build tag keeps it out of
// make test, it takes about 3 minutes): bundle endpoints
// (examples/n-cluster-mesh, https_spiffe), the courier
// (examples/courier-federation, no endpoint used) and published bundles
// (publishedConfig, https_web from each object in the lab's store). The
// clusters' SPIRE is laid out as the SPIFFE Helm chart does and both serves
// its bundle endpoint and publishes to the store, so that every mode finds
// what it needs on the same servers; each mode uses only its own path.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// fedMode is one way to federate: its configuration's directory and
// variables, and whether a forced rotation needs an apply to heal.
type fedMode struct {
	name, moves string
	dir         string
	vars        map[string]any
	// applyToHeal: the courier carries bundles only when Terraform runs.
	applyToHeal bool
	// applyIfStuck: with bundle endpoints, a peer that had not polled the
	// new authority before the endpoint's SVID moved to it cannot
	// authenticate the endpoint any more (https_spiffe); the example's
	// apply repairs that (bundle_stale).
	applyIfStuck bool
}

// stuckAfter is how long after the rotated cluster's SVID moved the pairs
// may take to heal on their own: two of the peers' polls.
const stuckAfter = 30 * time.Second

// modeResult is one row of the report.
type modeResult struct {
	mode            *fedMode
	apply, trust    time.Duration
	healApply, heal time.Duration
	stuckAt         time.Duration
	probes, failed  int
	lastFailure     time.Duration
}

// TestAccFederationModes starts three chart-layout clusters (SPIRE serving
// its bundle endpoint and publishing to the lab's object store, refresh
// hint 1m for both, X.509 SVIDs of 1m), an agent and workload each, once;
// then, per mode: the apply, timed until every ordered pair handshakes
// (time to trust); a forced rotation of east (prepare, activate as soon as
// east's own workload holds the new authority, taint), timed from the
// taint until east's workload holds an SVID of the new authority and every
// pair handshakes (time to heal; for the courier that includes the apply a
// scheduled run makes right after the taint; with bundle endpoints, pairs
// still failing 30 s after east's SVID moved are stuck, and the example's
// apply repairs them); destroy, after which every
// peer bundle is gone and every pair fails. It writes $ZT_MODES_REPORT,
// which it requires.
func TestAccFederationModes(t *testing.T) {
	report := os.Getenv("ZT_MODES_REPORT")
	if report == "" {
		t.Fatal("ZT_MODES_REPORT is not set: run make bench-modes, which writes bench/MODES.md")
	}
	ctx := context.Background()
	began := time.Now()
	names := []string{"fmeast", "fmwest", "fmnorth"}
	var clusters []*harness.Cluster
	for _, n := range names {
		clusters = append(clusters, acctest.OwnCluster(t, n))
	}
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	s3 := startLabS3(startCtx, t)
	spires := startOwnSpires(startCtx, t, clusters, func(c *harness.Cluster) harness.SpireOptions {
		return harness.SpireOptions{TrustDomain: c.Name + ".zt.test", ControllerManager: true, Helm: true,
			X509SVIDTTL: rotationSVIDTTL, FederationRefreshHint: rotationRefreshHint,
			S3Publisher: &harness.S3Publisher{Server: s3, RefreshHint: publishedRefreshHint}}
	})
	workloads := startMeshWorkloads(ctx, t, spires)
	labReady := time.Since(began)
	t.Logf("clusters, object store, SPIRE servers and workloads up in %v", labReady.Round(100*time.Millisecond))

	var results []modeResult
	for _, mode := range federationModes(t, spires, s3) {
		r := modeResult{mode: &mode}
		t.Run(strings.ReplaceAll(mode.name, " ", "_"), func(t *testing.T) {
			r = runMode(t, mode, spires, workloads)
		})
		if t.Failed() {
			t.FailNow()
		}
		results = append(results, r)
	}
	writeModesReport(t, report, results, labReady, time.Since(began))
}

// federationModes writes each mode's configuration and variables into a
// directory of its own, destroyed at the end of the test.
func federationModes(t *testing.T, spires []*harness.Spire, s3 *harness.S3) []fedMode {
	t.Helper()
	endpoints, courier, published := map[string]any{}, map[string]any{}, map[string]any{}
	for _, s := range spires {
		base := map[string]string{"config_path": s.Cluster.Kubeconfig, "config_context": s.Cluster.Name, "spire_install": "helm"}
		withURL := map[string]string{"bundle_endpoint_url": s.BundleEndpointURL}
		withTD := map[string]string{"trust_domain": s.TrustDomain}
		for k, v := range base {
			withURL[k], withTD[k] = v, v
		}
		endpoints[s.Cluster.Name], courier[s.Cluster.Name] = withURL, withTD
		published[s.Cluster.Name] = map[string]string{"config_path": s.Cluster.Kubeconfig, "trust_domain": s.TrustDomain}
	}
	modes := []fedMode{
		{name: "bundle endpoints", moves: "each SPIRE server polls its peers' bundle endpoints (https_spiffe)",
			dir: filepath.Join(copyExamples(t, "n-cluster-mesh"), "n-cluster-mesh"), vars: map[string]any{"clusters": endpoints}, applyIfStuck: true},
		{name: "courier", moves: "Terraform reads each bundle and writes it into the peers' SPIRE (no endpoint used)",
			dir: filepath.Join(copyExamples(t, "courier-federation"), "courier-federation"), vars: map[string]any{"clusters": courier}, applyToHeal: true},
		{name: "published bundles", moves: "SPIRE publishes to S3 (aws_s3); peers poll the object (https_web)",
			dir: t.TempDir(), vars: map[string]any{"clusters": published, "object_store_ca": string(s3.CACertPEM)}},
	}
	if err := os.WriteFile(filepath.Join(modes[2].dir, "main.tf"), []byte(publishedConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, m := range modes {
		data, err := json.Marshal(m.vars)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(m.dir, "terraform.tfvars.json"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		// A second destroy, after the mode's own, is a no-op.
		t.Cleanup(func() {
			if out, code := terraform(t, m.dir, "destroy", "-auto-approve", "-no-color"); code != 0 {
				t.Errorf("cleanup: terraform destroy of the %s mode exited %d:\n%s", m.name, code, out)
			}
		})
	}
	return modes
}

// runMode applies mode, measures time to trust, forces a rotation of east,
// measures time to heal, and destroys the mode, leaving no peer bundle.
func runMode(t *testing.T, mode fedMode, spires []*harness.Spire, workloads []*harness.Workload) modeResult {
	ctx := context.Background()
	r := modeResult{mode: &mode}
	start := time.Now()
	mustTerraform(t, mode.dir, "apply", "-auto-approve", "-no-color")
	r.apply = time.Since(start)
	federateWorkloads(ctx, t, workloads, spires)
	expectEveryPair(ctx, t, workloads, mode.name+": after the apply")
	r.trust = time.Since(start)
	t.Logf("%s: apply %v, every ordered pair handshakes %v after the apply began", mode.name,
		r.apply.Round(100*time.Millisecond), r.trust.Round(100*time.Millisecond))

	s, w := spires[east], workloads[east]
	prepared, _, taintedAt := rotateInAHurry(t, s, w)
	var withEast []pairResult
	for _, p := range orderedPairs(workloads) {
		if p.from == w || p.to == w {
			withEast = append(withEast, p)
		}
	}
	p := startProber(t, withEast)
	if mode.applyToHeal {
		healStart := time.Now()
		mustTerraform(t, mode.dir, "apply", "-auto-approve", "-no-color")
		r.healApply = time.Since(healStart)
	}
	waitSVIDFrom(t, "east's workload", w, prepared)
	timeout := mtlsTimeout
	if mode.applyIfStuck {
		timeout = stuckAfter
	}
	if failed := failedPairs(everyPair(ctx, workloads, true, timeout)); failed > 0 {
		if !mode.applyIfStuck {
			t.Fatalf("%s: %d pairs do not handshake %v after the forced rotation", mode.name, failed, time.Since(taintedAt).Round(time.Second))
		}
		r.stuckAt = time.Since(taintedAt)
		t.Logf("%s: %d pairs stuck %v after the taint; the example's apply repairs them", mode.name, failed, r.stuckAt.Round(100*time.Millisecond))
		healStart := time.Now()
		mustTerraform(t, mode.dir, "apply", "-auto-approve", "-no-color")
		r.healApply = time.Since(healStart)
	}
	expectEveryPair(ctx, t, workloads, mode.name+": after the forced rotation")
	r.heal = time.Since(taintedAt)
	_, probes, failures := p.stop()
	r.probes, r.failed = probes, len(failures)
	for _, f := range failures {
		r.lastFailure = max(r.lastFailure, f.at)
	}
	t.Logf("%s: forced rotation of %s, every pair handshakes %v after the taint (apply after the taint: %v); "+
		"%d of %d handshakes of the pairs involving east failed, the last %v after the taint", mode.name, s.TrustDomain,
		r.heal.Round(100*time.Millisecond), r.healApply.Round(100*time.Millisecond), r.failed, r.probes, r.lastFailure.Round(100*time.Millisecond))

	mustTerraform(t, mode.dir, "destroy", "-auto-approve", "-no-color")
	dropPeerBundles(ctx, t, spires)
	for _, res := range everyPair(ctx, workloads, false, mtlsTimeout) {
		if res.err != nil {
			t.Errorf("%s: after destroy: %v", mode.name, res.err)
		}
	}
	return r
}

// dropPeerBundles deletes, in every SPIRE server, any peer's bundle the
// destroyed mode left (entries dissociated), so that the next mode starts
// from no trust at all.
func dropPeerBundles(ctx context.Context, t *testing.T, spires []*harness.Spire) {
	t.Helper()
	for i, s := range spires {
		for _, td := range peerTrustDomains(spires, i) {
			out, err := s.CLI(ctx, "bundle", "delete", "-id", "spiffe://"+td, "-mode", "dissociate")
			if err != nil && !strings.Contains(strings.ToLower(string(out)+err.Error()), "not found") {
				t.Fatalf("deleting %s's bundle in %s: %v: %s", td, s.TrustDomain, err, out)
			}
		}
	}
}

// writeModesReport writes the one-table report to path.
func writeModesReport(t *testing.T, path string, results []modeResult, labReady, total time.Duration) {
	t.Helper()
	tfVersion, _ := terraform(t, t.TempDir(), "version")
	tfVersion, _, _ = strings.Cut(tfVersion, "\n")
	var b strings.Builder
	fmt.Fprintf(&b, `# Time to trust and time to heal, per federation mode

Written by `+"`make bench-modes`"+` (TestAccFederationModes in internal/examplestest, build tag benchmodes) on %s,
%d cores shared with other work (load average %s at the end), %s. The same three clusters for every mode, each
with a kube-apiserver, a real SPIRE 1.15 server laid out as the SPIFFE Helm chart does, spire-controller-manager,
a k8s_psat agent and a go-spiffe workload. Each SPIRE server both serves its bundle endpoint and publishes its
bundle with the aws_s3 BundlePublisher to the lab's S3 store (zts3), so every mode finds what it needs on the same
servers; each mode's configuration uses only its own path. Refresh hint 1m for both the endpoints and the objects
(peers poll every 15 s), X.509 SVIDs of 1m. Total %s, clusters and workloads ready after %s.

- **Time to trust**: from the start of the mode's first apply (nothing federated before it: the previous mode
  destroyed, every peer bundle deleted, every pair failing) until every one of the 6 ordered pairs of workloads
  handshakes.
- **Forced rotation** of one cluster: prepare, activate as soon as that cluster's own workload holds the new
  authority, taint the old one, without waiting for the peers.
- **Time to heal**: from the taint until the rotated cluster's workload holds an SVID of the new authority and
  every pair handshakes. For the courier that includes one apply run right after the taint, as a scheduled run
  would. Published bundles need none. With bundle endpoints, when pairs still fail 30 s (two polls) after the
  rotated cluster's SVID moved, the peers cannot authenticate its endpoint any more and the example's apply,
  run then, repairs them (counted in the time to heal). Handshakes of the 4 pairs involving the rotated cluster are probed every
  second from the taint.

| Mode | What moves the bundle | Apply | Time to trust | Apply after the taint | Time to heal | Failed handshakes while healing |
|---|---|---|---|---|---|---|
`, time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), loadAverage(), tfVersion, secs(total), secs(labReady))
	for _, r := range results {
		healApply := "none"
		switch {
		case r.mode.applyToHeal:
			healApply = secs(r.healApply) + ", right after the taint"
		case r.stuckAt > 0:
			healApply = fmt.Sprintf("%s, run when the pairs were stuck %s after the taint", secs(r.healApply), secs(r.stuckAt))
		}
		failed := fmt.Sprintf("%d of %d", r.failed, r.probes)
		if r.failed > 0 {
			failed += fmt.Sprintf(", the last %s after the taint", secs(r.lastFailure))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.mode.name, r.mode.moves, secs(r.apply), secs(r.trust),
			healApply, secs(r.heal), failed)
	}
	b.WriteString(`
Without an apply (bundle endpoints, published bundles) the heal needs the peers to hold the new authority before
the rotated cluster's SVIDs move to it: the peers' next poll after prepare (every 15 s here, a quarter of the
refresh hint) brings it, so a forced rotation that activates and taints sooner than one poll after prepare can see
the pairs fail until that poll, and with bundle endpoints a peer that has not polled by the time the endpoint's own
SVID moves cannot authenticate it any more, until an apply carries the bundle (the objects read bundle_stale); which
of the two a run meets depends on where the peers' polls fall. Published bundles are read over Web PKI, which the
rotation does not touch, so the next poll always heals them. With the courier the pairs
involving the rotated cluster fail from the moment its SVIDs move until the apply has carried its bundle: the time
to heal is the time to the next run.
`)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("report written to %s:\n%s", path, b.String())
}
