package leastprivilege_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
)

// TestLifecyclesCoverEveryType fails when a type registered with the
// provider has no block in the configurations TestAccLeastPrivilege runs
// (the list resources are queried from the registry by listAll), so a new
// resource, data source or action cannot ship untested under the
// manifest's permissions. It reads this package's sources, where those
// configurations are written.
func TestLifecyclesCoverEveryType(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	if len(listTypes()) == 0 {
		t.Error("the provider registers no list resource for listAll to query")
	}
	for _, typ := range provider.Types() {
		kind, name, _ := strings.Cut(typ, " zerotrust_")
		var block string
		switch kind {
		case "resource":
			block = "resource"
		case "data source":
			block = "data"
		case "action":
			block = "action"
		default:
			continue // list resources: listAll
		}
		if !strings.Contains(src.String(), fmt.Sprintf("%s \"zerotrust_%s\"", block, name)) {
			t.Errorf("%s has no %s block in the least-privilege configurations: add it to a lifecycle", typ, block)
		}
	}
}
