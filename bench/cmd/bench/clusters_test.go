package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	bundlev1 "github.com/spiffe/spire-api-sdk/proto/spire/api/server/bundle/v1"
	"github.com/spiffe/spire-api-sdk/proto/spire/api/types"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

func TestMeshConfig(t *testing.T) {
	p := provider{source: "registry.terraform.io/ztfabric/zerotrust", local: "zerotrust", version: "0.0.1"}
	facts := []meshClusterFacts{
		{Name: "mesh01", Kubeconfig: "/lab/mesh01/kubeconfig", BundleEndpointURL: "https://127.0.0.1:4001"},
		{Name: "mesh02", Kubeconfig: "/lab/mesh02/kubeconfig", BundleEndpointURL: "https://127.0.0.1:4002"},
		{Name: "mesh03", Kubeconfig: "/lab/mesh03/kubeconfig", BundleEndpointURL: "https://127.0.0.1:4003"},
	}
	src := meshConfig(p, facts, false)
	f, diags := hclsyntax.ParseConfig([]byte(src), "main.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("%s\n%s", diags, src)
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		t.Fatalf("body is %T", f.Body)
	}
	var got []string
	for _, block := range body.Blocks {
		got = append(got, strings.Join(append([]string{block.Type}, block.Labels...), " "))
	}
	want := []string{
		"terraform", "locals", "provider zerotrust",
		"data zerotrust_spire_server this", "data zerotrust_trust_bundle this", "locals",
		"resource zerotrust_spire_federation this", "resource zerotrust_federated_trust_domain peer",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("blocks %q, want %q", got, want)
	}
	for _, s := range []string{
		`source  = "ztfabric/zerotrust"`, `version = "= 0.0.1"`,
		`mesh02 = { config_path = "/lab/mesh02/kubeconfig", config_context = "mesh02", bundle_endpoint_url = "https://127.0.0.1:4002" }`,
		`wait_for_bundle     = true`,
	} {
		if !strings.Contains(src, s) {
			t.Errorf("config lacks %q:\n%s", s, src)
		}
	}

	// The time-to-trust run's configuration adds the ClusterSPIFFEIDs.
	src = meshConfig(p, facts, true)
	f, diags = hclsyntax.ParseConfig([]byte(src), "main.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("%s\n%s", diags, src)
	}
	wbody, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		t.Fatalf("body is %T", f.Body)
	}
	if b := wbody.Blocks[len(wbody.Blocks)-1]; b.Type != "resource" || !reflect.DeepEqual(b.Labels, []string{"zerotrust_cluster_spiffe_id", "web"}) {
		t.Errorf("last block %s %v, want resource zerotrust_cluster_spiffe_id web", b.Type, b.Labels)
	}
	for _, s := range []string{`name               = "` + trustCSID + `"`, `match_labels = { app = "` + trustCSID + `" }`, `if f.cluster == each.key`} {
		if !strings.Contains(src, s) {
			t.Errorf("config lacks %q:\n%s", s, src)
		}
	}
}

// fakeBundleClient answers ListFederatedBundles from pages keyed by page
// token and records the requests; the other methods of the interface are
// not called.
type fakeBundleClient struct {
	bundlev1.BundleClient
	pages    map[string]*bundlev1.ListFederatedBundlesResponse
	requests []*bundlev1.ListFederatedBundlesRequest
}

func (f *fakeBundleClient) ListFederatedBundles(_ context.Context, req *bundlev1.ListFederatedBundlesRequest, _ ...grpc.CallOption) (*bundlev1.ListFederatedBundlesResponse, error) {
	f.requests = append(f.requests, req)
	resp, ok := f.pages[req.GetPageToken()]
	if !ok {
		return nil, grpcstatus.Errorf(codes.InvalidArgument, "unknown page token %q", req.GetPageToken())
	}
	return resp, nil
}

func bundles(tds ...string) []*types.Bundle {
	out := make([]*types.Bundle, len(tds))
	for i, td := range tds {
		out[i] = &types.Bundle{TrustDomain: td}
	}
	return out
}

func TestListFederatedTrustDomains(t *testing.T) {
	f := &fakeBundleClient{pages: map[string]*bundlev1.ListFederatedBundlesResponse{
		"":       {Bundles: bundles("mesh03.zt.test", "mesh02.zt.test"), NextPageToken: "page-2"},
		"page-2": {Bundles: bundles("mesh01.zt.test")},
	}}
	tds, err := listFederatedTrustDomains(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"mesh01.zt.test", "mesh02.zt.test", "mesh03.zt.test"}; !reflect.DeepEqual(tds, want) {
		t.Errorf("trust domains %q, want %q (both pages, sorted)", tds, want)
	}
	if len(f.requests) != 2 || f.requests[0].GetPageToken() != "" || f.requests[1].GetPageToken() != "page-2" {
		t.Fatalf("requests %v, want the first page, then page-2", f.requests)
	}
	for i, req := range f.requests {
		// A set mask with nothing in it: no authorities. A nil mask would
		// ask for every field.
		if m := req.GetOutputMask(); m == nil || !proto.Equal(m, &types.BundleMask{}) {
			t.Errorf("request %d: output mask %v, want an empty one", i, m)
		}
	}

	f = &fakeBundleClient{pages: map[string]*bundlev1.ListFederatedBundlesResponse{"": {}}}
	if tds, err := listFederatedTrustDomains(t.Context(), f); err != nil || len(tds) != 0 {
		t.Errorf("no bundles: %q, %v; want none", tds, err)
	}

	f = &fakeBundleClient{pages: map[string]*bundlev1.ListFederatedBundlesResponse{
		"": {Bundles: bundles("mesh02.zt.test", "")},
	}}
	if _, err := listFederatedTrustDomains(t.Context(), f); err == nil || !strings.Contains(err.Error(), "without trust domain") {
		t.Errorf("a bundle without trust domain: error %v", err)
	}

	f = &fakeBundleClient{pages: map[string]*bundlev1.ListFederatedBundlesResponse{
		"": {Bundles: bundles("mesh02.zt.test"), NextPageToken: "gone"},
	}}
	if _, err := listFederatedTrustDomains(t.Context(), f); grpcstatus.Code(err) != codes.InvalidArgument {
		t.Errorf("a failing second page: error %v, want the server's InvalidArgument", err)
	}
}

func TestMeshAdded(t *testing.T) {
	out := "zerotrust_federated_trust_domain.peer[\"a->b\"]: Creation complete\n\nApply complete! Resources: 9 added, 0 changed, 0 destroyed.\n"
	if got := meshAdded(out); got != 9 {
		t.Errorf("meshAdded = %d, want 9", got)
	}
	if got := meshAdded("Error: boom"); got != -1 {
		t.Errorf("meshAdded without summary = %d, want -1", got)
	}
}

func TestMeshProviderRequests(t *testing.T) {
	dir := t.TempDir()
	const (
		provider = `"userAgent":"terraform-provider-zerotrust/0.0.1 (linux/amd64)"`
		manager  = `"userAgent":"manager/v0.0.0 (linux/amd64) kubernetes/$Format"`
	)
	logs := [][]string{
		{
			`{"stage":"ResponseComplete","verb":"get","user":{"username":"admin"},` + provider + `,"objectRef":{"resource":"clusterfederatedtrustdomains","apiGroup":"spire.spiffe.io"}}`,
			`{"stage":"ResponseStarted","verb":"create","user":{"username":"admin"},` + provider + `,"objectRef":{"resource":"pods","subresource":"exec"}}`,
			`{"stage":"ResponseComplete","verb":"create","user":{"username":"admin"},` + provider + `,"objectRef":{"resource":"pods","subresource":"exec"}}`,
			`{"stage":"ResponseComplete","verb":"list","user":{"username":"admin"},` + manager + `,"objectRef":{"resource":"clusterfederatedtrustdomains"}}`,
			`{"stage":"ResponseComplete","verb":"get","user":{"username":"system:apiserver"},` + provider + `,"objectRef":{"resource":"namespaces"}}`,
		},
		{
			`{"stage":"ResponseComplete","verb":"patch","user":{"username":"admin"},` + provider + `,"objectRef":{"resource":"spireservers"}}`,
			`{"stage":"ResponseComplete","verb":"get","user":{"username":"admin"},` + provider + `}`,
		},
	}
	a := &auditReader{offsets: make([]int64, len(logs))}
	for i, lines := range logs {
		p := filepath.Join(dir, "audit"+string(rune('a'+i))+".log")
		// A line before the mark must not count.
		if err := os.WriteFile(p, []byte(lines[0]+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		a.paths = append(a.paths, p)
	}
	a.mark()
	for i, lines := range logs {
		if err := os.WriteFile(a.paths[i], []byte(strings.Join(append(lines[:1:1], lines...), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	counts, perCluster, err := meshProviderRequests(a)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts := map[string]int{"get cftd": 1, "create pods/exec": 1, "patch spireservers": 1, "discovery": 1}
	if !reflect.DeepEqual(counts, wantCounts) {
		t.Errorf("counts %v, want %v", counts, wantCounts)
	}
	if want := []int{2, 2}; !reflect.DeepEqual(perCluster, want) {
		t.Errorf("per cluster %v, want %v", perCluster, want)
	}
}

func TestClusterScaleMarkdown(t *testing.T) {
	if got := clusterScaleMarkdown(&Results{}); got != "" {
		t.Errorf("no rows: %q, want nothing", got)
	}
	r := &Results{Machine: Machine{CPUs: 2}, ClusterScale: []ClusterScaleRow{
		{Clusters: 3, Terraform: "1.16.0", Resources: 9, Runs: 3, NewClusters: 3, StartWall: 20, ApplyWall: 9, ApplyWalls: []float64{9, 12.25, 8}, ApplyCPUTotal: 3, ApplyCPUProvider: 1,
			ApplyLabCPU: 4.5, ApplyMachineBusy: 0.951, ProviderRSS: 30 << 20, AllBundlesHeld: 8.5, BundlesHeldPerCluster: []float64{8.5, 7.25, 8}, RequestsPerCluster: map[string]float64{"get cftd": 4, "create pods/exec": 2.5},
			RequestsPerClusterTotal: 6.5, RequestsMaxCluster: 7, PlanWall: 2, PlanEmpty: true, DestroyWall: 5},
		{Clusters: 6, Terraform: "1.16.0", Resources: 36, NewClusters: 3, StartWall: 21, ApplyWall: 30,
			RequestsPerCluster: map[string]float64{"get cftd": 10}, RequestsPerClusterTotal: 10, RequestsMaxCluster: 10,
			PlanWall: 3, DestroyWall: 9, Error: "the plan after the apply is not empty: ~ update | x"},
	}}
	got := clusterScaleMarkdown(r)
	for _, want := range []string{
		"k = 3, 6",
		"the machine's 2 cores",
		"destroy 3 times",
		"| 3 | 1.16.0 | 9 | 9.0 (9.0, 12.2, 8.0) | 1000 | 3.0 / 1.0 / 4.5 | 95% | 30.0 | 8.5, 7.2 | 6 (7) | 2.0 | 5.0 | 3, 20 |",
		"| 6 | 1.16.0 | 36 | 30.0 | 833 | 0.0 / 0.0 / 0.0 | 0% | 0.0 | not reached | 10 (10) | 3.0 (not empty) | 9.0 | 3, 21 |",
		"| create pods/exec | 2.5 | 0 |",
		"| get cftd | 4 | 10 |",
		`- 6 clusters: the plan after the apply is not empty: ~ update \| x`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks %q:\n%s", want, got)
		}
	}
}

func TestClusterScaleSummarize(t *testing.T) {
	run := func(wall float64, held time.Duration, planEmpty bool, rss int64, requests map[string]int) meshRun {
		return meshRun{
			apply:          phaseSample{Wall: wall, ProviderRSS: rss},
			held:           held,
			heldPerCluster: []time.Duration{held, held / 2},
			requests:       requests,
			applied:        true,
			planEmpty:      planEmpty,
			plan:           wall / 10,
		}
	}
	row := ClusterScaleRow{Clusters: 2}
	row.summarize([]meshRun{
		run(10, 9*time.Second, true, 40<<20, map[string]int{"get cftd": 4}),
		run(30, 20*time.Second, true, 50<<20, map[string]int{"get cftd": 6, "discovery": 2}),
		run(12, 11*time.Second, false, 45<<20, map[string]int{"get cftd": 4}),
	})
	if row.ApplyWall != 12 || !reflect.DeepEqual(row.ApplyWalls, []float64{10, 30, 12}) {
		t.Errorf("apply %v %v, want median 12 of [10 30 12]", row.ApplyWall, row.ApplyWalls)
	}
	if row.ProviderRSS != 50<<20 {
		t.Errorf("RSS %d, want the largest", row.ProviderRSS)
	}
	if row.AllBundlesHeld != 11 || !reflect.DeepEqual(row.BundlesHeldPerCluster, []float64{11, 5.5}) {
		t.Errorf("held %v %v, want 11 and the median run's [11 5.5]", row.AllBundlesHeld, row.BundlesHeldPerCluster)
	}
	if row.PlanEmpty || row.PlanWall != 1.2 {
		t.Errorf("plan empty %v wall %v, want not empty (one run planned changes), 1.2", row.PlanEmpty, row.PlanWall)
	}
	if want := map[string]float64{"get cftd": 2, "discovery": 0}; !reflect.DeepEqual(row.RequestsPerCluster, want) || row.RequestsPerClusterTotal != 2 {
		t.Errorf("requests %v total %v, want %v total 2", row.RequestsPerCluster, row.RequestsPerClusterTotal, want)
	}

	row = ClusterScaleRow{Clusters: 2}
	row.summarize([]meshRun{run(10, 9*time.Second, true, 1, nil), run(10, 0, true, 1, nil)})
	if row.AllBundlesHeld != 0 || row.BundlesHeldPerCluster != nil {
		t.Errorf("held %v %v, want not reached when a run did not reach it", row.AllBundlesHeld, row.BundlesHeldPerCluster)
	}
}

func TestTrustMarkdownAndGoals(t *testing.T) {
	r := &Results{ClusterScale: []ClusterScaleRow{
		{Clusters: 3, Resources: 9},
	}}
	if got := trustMarkdown(r); got != "" {
		t.Errorf("no time-to-trust runs: %q, want nothing", got)
	}
	r = &Results{
		ClusterScale: []ClusterScaleRow{
			{Clusters: 3, TrustPairs: 6, TrustApplyWall: 1.5, TrustBundlesHeld: 1.25, TrustWorkloadsServing: 3.25, TimeToTrust: 4.5, TrustDials: 7},
			{Clusters: 6, TrustPairs: 30, TrustApplyWall: 5, TrustError: "2 ordered pairs had not handshaken | x"},
		},
		ClusterHeal: []HealCase{
			{Clusters: 3, Case: "lost bundle", Damage: "`bundle delete`", Broke: true, PlanExit: 2, PlanTrust: []string{"bundle_missing -> federated ×1"},
				PlanChanges: 1, Expect: "bundle_missing", PlanShowsRepair: true, ApplyWall: 1.25, AllPairs: 2.5, Pairs: 6, PlanAfterEmpty: true, PairsAfter: 6},
			{Clusters: 3, Case: "forced rotation", PlanExit: 0, Expect: "bundle_stale", ApplyWall: 1, Pairs: 6, Error: "plan before the apply exited 0"},
		},
	}
	got := trustMarkdown(r)
	for _, want := range []string{
		"| 3 | 6 | 1.5 | 1.2 | 3.2 | 4.5 | 7 |",
		"| 6 | 30 | 5.0 | 0.0 | 0.0 | not reached | 0 |",
		`- 6 clusters: 2 ordered pairs had not handshaken \| x`,
		"| lost bundle (3 clusters) | `bundle delete` | true | 2, bundle_missing -> federated ×1 (1 to change) | true | 1.2 | 2.5 | true | 6 of 6 |",
		"| forced rotation (3 clusters) |  | false | 0, no spire_trust change (0 to change) | false | 1.0 | not reached | false | 0 of 6 |",
		"- forced rotation: plan before the apply exited 0",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks %q:\n%s", want, got)
		}
	}
	var goals []Goal
	r.trustGoals(func(g Goal) { goals = append(goals, g) })
	if len(goals) != 2 || goals[0].Status != notMet || goals[1].Status != notMet {
		t.Fatalf("goals = %+v, want two, not met", goals)
	}
	if want := "3 clusters (6 pairs) 4.5 s; 6 clusters: not reached"; goals[0].Measured != want {
		t.Errorf("time to trust measured %q, want %q", goals[0].Measured, want)
	}
	r.ClusterScale = r.ClusterScale[:1]
	for i := range healCaseList {
		r.ClusterHeal = append(r.ClusterHeal[:i], HealCase{Case: healCaseList[i].name, PlanShowsRepair: true, AllPairs: 3, PlanAfterEmpty: true, Pairs: 6, PairsAfter: 6})
	}
	goals = nil
	r.trustGoals(func(g Goal) { goals = append(goals, g) })
	if len(goals) != 2 || goals[0].Status != met || goals[1].Status != met {
		t.Errorf("goals = %+v, want two, met", goals)
	}

	// A row whose ClusterSPIFFEIDs the apply created says so.
	r.ClusterScale[0].TrustClusterSPIFFEIDsInApply = true
	goals = nil
	r.trustGoals(func(g Goal) { goals = append(goals, g) })
	if want := "3 clusters (6 pairs) 4.5 s (ClusterSPIFFEIDs in the apply)"; goals[0].Measured != want {
		t.Errorf("time to trust measured %q, want %q", goals[0].Measured, want)
	}
}

func TestPlanTrustRE(t *testing.T) {
	plan := `  # zerotrust_federated_trust_domain.peer["mesh01->mesh03"] will be updated in-place
  ~ resource "zerotrust_federated_trust_domain" "peer" {
      ~ spire_trust             = "bundle_missing" -> "federated"
        # (9 unchanged attributes hidden)
    }

Plan: 0 to add, 1 to change, 0 to destroy.`
	m := planTrustRE.FindAllStringSubmatch(plan, -1)
	if len(m) != 1 || m[0][1] != "bundle_missing" {
		t.Errorf("spire_trust changes %q, want one from bundle_missing", m)
	}
	if c := planChangesRE.FindStringSubmatch(plan); c == nil || c[2] != "1" {
		t.Errorf("plan summary %q, want 1 to change", c)
	}
}

func TestJoinMarkdownAndGoal(t *testing.T) {
	r := &Results{}
	if got := joinMarkdown(r); got != "" {
		t.Errorf("no join run: %q, want nothing", got)
	}
	r.ClusterJoin = []JoinRow{{Clusters: 4, Pairs: 12, NewPairs: 6, ApplyWall: 6.5, BundlesHeld: 3.2, TimeToJoin: 14.25, Dials: 40}}
	got := joinMarkdown(r)
	for _, want := range []string{"### Time to join", "| 3 -> 4 | 12 (6) | 6.5 | 3.2 | 14.2 | 40 |"} {
		if !strings.Contains(got, want) {
			t.Errorf("join section lacks %q:\n%s", want, got)
		}
	}
	var goals []Goal
	r.joinGoal(func(g Goal) { goals = append(goals, g) })
	if len(goals) != 1 || goals[0].Status != met || goals[0].Measured != "3 -> 4 clusters (12 pairs, 6 new) 14.2 s" {
		t.Errorf("goals = %+v, want one, met, 3 -> 4 clusters (12 pairs, 6 new) 14.2 s", goals)
	}
	r.ClusterJoin[0].TimeToJoin, r.ClusterJoin[0].Error = 0, "apply failed"
	goals = nil
	r.joinGoal(func(g Goal) { goals = append(goals, g) })
	if goals[0].Status == met || !strings.Contains(joinMarkdown(r), "- 3 -> 4 clusters: apply failed") {
		t.Errorf("a join not reached: goal %+v, section:\n%s", goals[0], joinMarkdown(r))
	}
}

// The courier configuration parses, carries a bundle per ordered pair with
// each cluster's given trust domain, and its ClusterSPIFFEIDs federate with
// the carried trust domains.
func TestCourierConfig(t *testing.T) {
	p := provider{source: "registry.terraform.io/ztfabric/zerotrust", version: "0.0.1"}
	src := courierConfig(p, []courierClusterFacts{
		{Name: "mesh01", Kubeconfig: "/k/1", TrustDomain: "mesh01.zt.test"},
		{Name: "mesh02", Kubeconfig: "/k/2", TrustDomain: "mesh02.zt.test"},
	})
	f, diags := hclsyntax.ParseConfig([]byte(src), "main.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("%s\n%s", diags, src)
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		t.Fatalf("body is %T", f.Body)
	}
	var resources []string
	for _, b := range body.Blocks {
		if b.Type == "resource" {
			resources = append(resources, strings.Join(b.Labels, "."))
		}
	}
	if want := []string{"zerotrust_spire_bundle.peer", "zerotrust_cluster_spiffe_id.workloads"}; !reflect.DeepEqual(resources, want) {
		t.Errorf("resources %v, want %v", resources, want)
	}
	for _, s := range []string{
		`mesh02 = { config_path = "/k/2", config_context = "mesh02", trust_domain = "mesh02.zt.test" }`,
		`on_unreachable = "warn"`,
		`name               = "` + trustCSID + `"`,
		`if b.cluster == each.key`,
	} {
		if !strings.Contains(src, s) {
			t.Errorf("config lacks %q:\n%s", s, src)
		}
	}
	if strings.Contains(src, "zerotrust_federated_trust_domain") || strings.Contains(src, "zerotrust_spire_federation") {
		t.Errorf("the courier configuration has a federation relationship:\n%s", src)
	}
}

func TestCourierMarkdownAndGoal(t *testing.T) {
	r := &Results{}
	if got := courierMarkdown(r); got != "" {
		t.Errorf("no courier run: %q, want nothing", got)
	}
	r.ClusterCourier = []CourierRow{{Clusters: 3, Pairs: 6, Bundles: 6, ApplyWall: 7.5, BundlesHeld: 4.25, TimeToTrust: 15.5, Dials: 30}}
	got := courierMarkdown(r)
	for _, want := range []string{"### Time to trust when Terraform carries the bundles", "| 3 | 6 | 6 | 7.5 | 4.2 | 15.5 | 30 |"} {
		if !strings.Contains(got, want) {
			t.Errorf("courier section lacks %q:\n%s", want, got)
		}
	}
	var goals []Goal
	r.courierGoal(func(g Goal) { goals = append(goals, g) })
	if len(goals) != 1 || goals[0].Status != met || goals[0].Measured != "3 clusters (6 bundles carried, 6 pairs) 15.5 s" {
		t.Errorf("goals = %+v", goals)
	}
	r.ClusterCourier[0].TimeToTrust, r.ClusterCourier[0].Error = 0, "apply failed"
	goals = nil
	r.courierGoal(func(g Goal) { goals = append(goals, g) })
	if goals[0].Status == met || !strings.Contains(courierMarkdown(r), "- 3 clusters: apply failed") {
		t.Errorf("a courier run not reached: goal %+v, section:\n%s", goals[0], courierMarkdown(r))
	}
}
