package main

// ClusterScaleRow is one full-mesh bootstrap of Clusters clusters, each with a
// real SPIRE server and spire-controller-manager, in ONE terraform apply:
// Clusters*(Clusters-1) zerotrust_federated_trust_domain resources plus one
// zerotrust_spire_federation per cluster.
type ClusterScaleRow struct {
	Clusters  int    `json:"clusters"`
	Terraform string `json:"terraform"` // version of the CLI that ran this row, e.g. "1.16.0"
	Resources int    `json:"resources"` // managed resources the apply creates
	// NewClusters were started for this row (the others served the rows
	// before it), taking StartWall seconds with their SPIRE installations.
	NewClusters int     `json:"new_clusters"`
	StartWall   float64 `json:"clusters_start_s"`
	// Runs is how many times the row ran apply, plan and destroy; times,
	// CPU and request counts are medians over the runs (each on its own),
	// RSS and RequestsMaxCluster the largest of any run.
	Runs int `json:"runs"`
	// Apply is the one terraform apply of the whole mesh (wall clock, CPU of
	// terraform and its children, provider CPU sampled from /proc, peak
	// VmHWM and RssAnon of one provider process). ApplyWalls are the runs'.
	ApplyWall        float64   `json:"apply_wall_s"`
	ApplyWalls       []float64 `json:"apply_walls_s"`
	ApplyCPUTotal    float64   `json:"apply_cpu_total_s"`
	ApplyCPUProvider float64   `json:"apply_cpu_provider_s"`
	ProviderRSS      int64     `json:"provider_peak_rss_bytes"`
	ProviderAnon     int64     `json:"provider_peak_anon_bytes"`
	// ApplyMachineCPU is the CPU time all cores of the machine spent busy
	// during the apply (/proc/stat): terraform and the provider, and the
	// lab too (API servers, etcd, SPIRE servers, spire-controller-manager,
	// the spire-server processes pod exec runs). ApplyMachineBusy is that
	// over wall time times cores: near 1, the machine is the bottleneck.
	ApplyMachineCPU  float64 `json:"apply_machine_cpu_s"`
	ApplyMachineBusy float64 `json:"apply_machine_busy"`
	// ApplyLabCPU is the part of it the lab's long-running processes used:
	// etcd, kube-apiserver, spire-server and spire-controller-manager of
	// every cluster.
	ApplyLabCPU float64 `json:"apply_lab_cpu_s"`
	// AllBundlesHeld is the time from the start of the apply until every
	// SPIRE server holds the bundle of every peer (asked from SPIRE).
	AllBundlesHeld float64 `json:"all_bundles_held_s"`
	// BundlesHeldPerCluster is, per cluster in name order, when its SPIRE
	// server held its last peer bundle: a serial per-cluster step would
	// show as times spread evenly apart in that order.
	BundlesHeldPerCluster []float64 `json:"bundles_held_per_cluster_s,omitempty"`
	// RequestsPerCluster counts the API requests the provider made to each
	// cluster during the apply (audit log, user admin, the provider's user
	// agent), by verb and resource as in the N tables ("get cftd", "patch
	// spireservers", "create pods/exec", ...), summed over clusters and
	// divided by the number of clusters. RequestsMaxCluster is the count of
	// the cluster that got the most: far above the mean would mean one
	// cluster does work for all.
	RequestsPerCluster      map[string]float64 `json:"requests_per_cluster"`
	RequestsPerClusterTotal float64            `json:"requests_per_cluster_total"`
	RequestsMaxCluster      int                `json:"requests_max_cluster"`
	// PlanWall is a plan (with refresh) right after the apply; PlanEmpty
	// whether it planned nothing in every run.
	PlanWall    float64 `json:"plan_wall_s"`
	PlanEmpty   bool    `json:"plan_empty"`
	DestroyWall float64 `json:"destroy_wall_s,omitempty"`
	Error       string  `json:"error,omitempty"`

	// Time to trust: one more apply of the row's mesh (after the timed
	// cycles), with a k8s_psat agent and a Pod whose workload waits for its
	// SVID in every cluster before it starts, and a ClusterSPIFFEID per
	// cluster federating with every peer: created by that apply when
	// TrustClusterSPIFFEIDsInApply, before it otherwise (results of earlier
	// versions of this program). TimeToTrust is from the start of that apply until
	// every ordered pair of workloads (TrustPairs) has completed an mTLS
	// handshake; zero: not reached. TrustBundlesHeld is when every SPIRE
	// server held every peer bundle (as AllBundlesHeld); TrustWorkloadsServing is when the last
	// workload got its SVID (SPIRE makes the entries only once it holds
	// every peer bundle); TrustDials the handshakes tried.
	TrustApplyWall        float64 `json:"trust_apply_wall_s,omitempty"`
	TimeToTrust           float64 `json:"time_to_trust_s,omitempty"`
	TrustBundlesHeld      float64 `json:"trust_bundles_held_s,omitempty"`
	TrustWorkloadsServing float64 `json:"trust_workloads_serving_s,omitempty"`
	TrustPairs            int     `json:"trust_pairs,omitempty"`
	TrustDials            int     `json:"trust_dials,omitempty"`
	TrustError            string  `json:"trust_error,omitempty"`

	TrustClusterSPIFFEIDsInApply bool `json:"trust_cluster_spiffe_ids_in_apply,omitempty"`
}

// HealCase is one time-to-heal measurement on the federated mesh of the
// time-to-trust run of Clusters clusters: damage to one SPIRE server, then
// a plan and one apply of the unchanged configuration.
type HealCase struct {
	Clusters int    `json:"clusters"`
	Case     string `json:"case"`
	Damage   string `json:"damage"`
	// Broke: a handshake of the damaged pair failed before the plan
	// (BreakDetail is what the client said).
	Broke       bool   `json:"broke"`
	BreakDetail string `json:"break_detail,omitempty"`
	// The plan before the apply: its -detailed-exitcode (2: changes), the
	// spire_trust changes it showed ("bundle_missing -> federated ×1"),
	// its "to change" count, and whether it showed Expect -> federated.
	PlanExit        int      `json:"plan_exit"`
	PlanTrust       []string `json:"plan_spire_trust,omitempty"`
	PlanChanges     int      `json:"plan_changes"`
	Expect          string   `json:"expect"`
	PlanShowsRepair bool     `json:"plan_shows_repair"`
	// ApplyWall is the repairing apply; AllPairs the time from its start
	// until every ordered pair (Pairs) handshook, zero: not reached; Dials
	// the handshakes tried.
	ApplyWall      float64 `json:"apply_wall_s"`
	AllPairs       float64 `json:"all_pairs_s,omitempty"`
	Pairs          int     `json:"pairs"`
	Dials          int     `json:"dials"`
	PlanAfterEmpty bool    `json:"plan_after_empty"`
	// PairsAfter is how many ordered pairs handshook in one more check, a
	// settling time after the apply: a pair that handshook during the
	// apply, before the repair reached it, may fail after it.
	PairsAfter int    `json:"pairs_after"`
	Error      string `json:"error,omitempty"`
}
