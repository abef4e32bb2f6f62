// Command rbacgen writes the least-privilege manifest and the guide template
// rendered from internal/rbac's table. Run it from the repository root
// (scripts/docs.sh does, before tfplugindocs).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/rbac"
)

func main() {
	for path, data := range map[string][]byte{rbac.ManifestPath: rbac.Manifest(), rbac.GuidePath: rbac.Guide()} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "rbacgen:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil { //nolint:gosec // committed docs, world-readable
			fmt.Fprintln(os.Stderr, "rbacgen:", err)
			os.Exit(1)
		}
	}
}
