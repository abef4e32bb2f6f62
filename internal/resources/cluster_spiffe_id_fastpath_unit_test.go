package resources

import "testing"

// TestClusterSPIFFEIDShortcutAcceptsSchema fails when a schema change gives
// zerotrust_cluster_spiffe_id something fastpath.Shortcut does not model (a
// nested default, a semantic-equality type, a write-only attribute): the
// fast path would then quietly refuse every request and only the benchmark
// would notice.
func TestClusterSPIFFEIDShortcutAcceptsSchema(t *testing.T) {
	if why := clusterSPIFFEIDType.fast().Refuses(); why != "" {
		t.Fatalf("the fast path refuses zerotrust_cluster_spiffe_id's schema: %s", why)
	}
}
