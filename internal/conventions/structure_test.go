package conventions_test

import (
	"os/exec"
	"strings"
	"testing"
)

// testTooling are the packages that exist only for tests, bench/ and the
// demo lab: the provider binary must link none of them (see the package
// comment).
var testTooling = []string{
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit",
	"github.com/ztfabric/terraform-provider-zerotrust/internal/standin",
}

// TestProviderLinksNoTestTooling: the provider binary's package graph (the
// repository root's dependencies) holds no test tooling package.
func TestProviderLinksNoTestTooling(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps . in %s: %v", cmd.Dir, err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 {
		t.Fatal("go list -deps . listed no packages")
	}
	for _, dep := range deps {
		for _, tooling := range testTooling {
			if dep == tooling || strings.HasPrefix(dep, tooling+"/") {
				t.Errorf("the provider binary imports %s, which is test tooling: import it only from tests, bench/ or internal/testkit/cmd", dep)
			}
		}
	}
}
