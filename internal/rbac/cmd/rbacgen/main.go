// Command rbacgen writes the least-privilege manifests and the guide template
// rendered from internal/rbac's table, and removes manifests of examples/rbac
// the table no longer renders. Run it from the repository root
// (scripts/docs.sh does, before tfplugindocs).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/rbac"
)

func main() {
	out := map[string][]byte{rbac.GuidePath: rbac.Guide()}
	for _, f := range rbac.Files {
		out[f.Path] = f.Render()
	}
	stale, err := filepath.Glob(filepath.Join(rbac.ManifestDir, "*.yaml"))
	if err != nil {
		fail(err)
	}
	for _, path := range stale {
		if !slices.Contains(rbac.Paths(), filepath.ToSlash(path)) {
			if err := os.Remove(path); err != nil {
				fail(err)
			}
		}
	}
	for path, data := range out {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fail(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil { //nolint:gosec // committed docs, world-readable
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "rbacgen:", err)
	os.Exit(1)
}
