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
}
