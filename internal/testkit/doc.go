// Package testkit is the parent of the repository's test tooling; it holds
// no code itself. Everything below it exists for acceptance tests, bench/
// and the demo lab, never for the provider: the provider binary imports none
// of it (internal/conventions fails when it does).
//
//   - harness: local clusters (etcd and kube-apiserver), SPIRE servers and
//     agents, spire-controller-manager, Knot DNS servers and test workloads.
//   - podattest: the workload attestation that stands in for the kubelet.
//   - upstreamcrds: the operators' published CRDs, pinned and checksummed,
//     from a directory, the tool cache, ../shared or a download.
//   - cmd/ztlab: the lab behind `make demo`; cmd/ztworkload and
//     cmd/ztpodattestor: the workload and the SPIRE workload attestor plugin
//     the harness builds and runs.
//
// The operator stand-ins are in internal/standin, and what acceptance tests
// share in internal/acctest.
package testkit
