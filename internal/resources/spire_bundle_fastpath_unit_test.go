package resources

import "testing"

// TestSpireBundleShortcutAcceptsSchema fails when a schema change gives
// zerotrust_spire_bundle something fastpath.Shortcut does not model: the
// fast path would then quietly refuse every request and only the benchmark
// would notice.
func TestSpireBundleShortcutAcceptsSchema(t *testing.T) {
	if why := spireBundleFast().Refuses(); why != "" {
		t.Fatalf("the fast path refuses zerotrust_spire_bundle's schema: %s", why)
	}
}
