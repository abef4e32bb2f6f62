package resources_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

func TestMain(m *testing.M) { acctest.Main(m) }

// testdataConfig is a provider block (acctest.ProviderConfig or
// ProviderConfigFor) followed by the configuration in testdata/<file>; a
// step sets that file's variables with ConfigVariables.
func testdataConfig(t *testing.T, providerBlock, file string) string {
	t.Helper()
	hcl, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatalf("read the test configuration: %v", err)
	}
	return providerBlock + "\n" + string(hcl)
}
