// Package examplestest runs the repository's example configurations with the
// terraform CLI and the locally built provider binary (dev_overrides), the
// way users run them, against the harness clusters.
package examplestest

import (
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

func TestMain(m *testing.M) {
	acctest.Main(m)
}
