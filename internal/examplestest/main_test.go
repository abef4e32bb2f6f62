// Package examplestest runs the repository's example configurations against
// the harness clusters: most with the terraform CLI and the locally built
// provider binary (dev_overrides), the way users run them, and a few
// in-process with resource.Test, where plan and state checks say more than
// the CLI's output (see exampleWithout). Every test of an example lives here.
package examplestest

import (
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

func TestMain(m *testing.M) {
	acctest.Main(m)
}
