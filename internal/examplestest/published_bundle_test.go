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
// peer's published object, at the URL zerotrust_spire_server reads from the
// chart's server configuration (bundle_publishers). No trust_domain_bundle
// between chart clusters: the first https_web fetch needs none, and
// wait_for_bundle ends the apply once SPIRE holds the peer's bundle. An
// operator cluster starts from the object as zerotrust_trust_bundle's
// published source reads it (with the lab store's CA).
const publishedConfig = `
terraform {
  required_providers {
    zerotrust = { source = "ztfabric/zerotrust" }
  }
}

variable "clusters" {
  type = map(object({
    config_path  = string
    trust_domain = string
  }))
}

# The lab's object store has a CA of its own, as a private S3-compatible
# store would; S3, GCS and Azure Blob need none (the system roots).
variable "object_store_ca" {
  type = string
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

# What each chart cluster's SPIRE publishes, from its server configuration.
data "zerotrust_spire_server" "chart" {
  for_each = var.clusters

  cluster = each.key
}

locals {
  published_url = {
    for name, s in data.zerotrust_spire_server.chart :
    name => one([for p in s.bundle_publishers : p.url if p.type == "aws_s3" && p.format == "spiffe"])
  }
}

# Each published object, read over HTTPS as a peer's SPIRE reads it.
data "zerotrust_trust_bundle" "published" {
  for_each = var.clusters

  trust_domain = each.value.trust_domain
  published    = { url = local.published_url[each.key], ca_certificates = var.object_store_ca }
  timeout      = "10s"
}

output "published_url" {
  value = local.published_url
}

output "published_sequence" {
  value = { for name, b in data.zerotrust_trust_bundle.published : name => b.sequence_number }
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
  bundle_endpoint_url     = local.published_url[each.value.peer]
  bundle_endpoint_profile = { type = "https_web" }
  wait_for_bundle         = true
  # Chart clusters start from the first fetch; operator clusters from the
  # object the provider read.
  trust_domain_bundle = contains(keys(var.operator_clusters), each.value.cluster) ? data.zerotrust_trust_bundle.published[each.value.peer].spiffe_bundle : null
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
// after the storage is back (timed); a plan meanwhile fails, naming the
// store (the configuration reads the objects). Every other plan is empty
// (no resource change). Then
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
	s3 := startLabS3(startCtx, t)
	spires := startOwnSpires(startCtx, t, clusters, func(c *harness.Cluster) harness.SpireOptions {
		o := harness.SpireOptions{TrustDomain: c.Name + ".zt.test", ControllerManager: true, X509SVIDTTL: rotationSVIDTTL, NoBundleEndpoint: true}
		if c.Name == operator {
			o.WebPKIRoots = s3.CACertFile
		} else {
			o.Helm, o.S3Publisher = true, &harness.S3Publisher{Server: s3, RefreshHint: publishedRefreshHint}
		}
		return o
	})
	expectNoBundleEndpoints(t, spires)
	workloads := startMeshWorkloads(ctx, t, spires)
	n := len(names)
	m := &publishedMesh{s3: s3, spires: spires[:n], workloads: workloads[:n], op: spires[n], opWorkload: workloads[n], dir: t.TempDir()}
	clustersVar := map[string]any{}
	for _, s := range m.spires {
		clustersVar[s.Cluster.Name] = map[string]string{"config_path": s.Cluster.Kubeconfig, "trust_domain": s.TrustDomain}
		t.Logf("%s publishes to %s", s.TrustDomain, s.PublishedBundleURL)
	}
	m.vars = map[string]any{"clusters": clustersVar, "object_store_ca": string(s3.CACertPEM)}
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
	m.checkPublishedOutputs(t)
	planEmpty(t, m.dir, "after the first apply")
	return m
}

// startLabS3 starts the lab's object store, stopped at the end of the test.
func startLabS3(ctx context.Context, t *testing.T) *harness.S3 {
	t.Helper()
	s3, err := harness.StartS3(ctx, harness.S3Options{Dir: filepath.Join(t.TempDir(), "s3")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s3.Stop(); err != nil {
			t.Error(err)
		}
	})
	return s3
}

// startOwnSpires starts a SPIRE server of the test's own on each cluster,
// with the options opts gives it, stopped at the end of the test.
func startOwnSpires(ctx context.Context, t *testing.T, clusters []*harness.Cluster, opts func(*harness.Cluster) harness.SpireOptions) []*harness.Spire {
	t.Helper()
	spires, err := harness.StartSpires(ctx, clusters, opts)
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
	return spires
}

// checkPublishedOutputs checks that zerotrust_spire_server found, in each
// chart server's configuration, the URL real SPIRE publishes to, and that
// zerotrust_trust_bundle read the object real SPIRE wrote there (a
// sequence number, which only the SPIFFE format carries).
func (m *publishedMesh) checkPublishedOutputs(t *testing.T) {
	t.Helper()
	var urls map[string]string
	var sequences map[string]*int64
	if err := json.Unmarshal([]byte(mustTerraform(t, m.dir, "output", "-json", "published_url")), &urls); err != nil {
		t.Fatalf("output published_url: %v", err)
	}
	if err := json.Unmarshal([]byte(mustTerraform(t, m.dir, "output", "-json", "published_sequence")), &sequences); err != nil {
		t.Fatalf("output published_sequence: %v", err)
	}
	for _, s := range m.spires {
		name := s.Cluster.Name
		if urls[name] != s.PublishedBundleURL {
			t.Errorf("%s: zerotrust_spire_server's bundle_publishers give %q, SPIRE publishes to %q", name, urls[name], s.PublishedBundleURL)
		}
		if sequences[name] == nil {
			t.Errorf("%s: zerotrust_trust_bundle read the published object without a sequence number", name)
			continue
		}
		t.Logf("%s: bundle_publishers url %s, published object read with sequence number %d", name, urls[name], *sequences[name])
	}
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
