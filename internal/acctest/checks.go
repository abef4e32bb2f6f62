package acctest

import (
	"context"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// Checks that test packages share: the resources tests and the example tests
// ask the clusters the same questions, so the checks live here once.

// ClusterCheck runs a check against the cluster as a state check: the legacy
// Check field cannot address for_each instances, and a check that asks the
// API server or SPIRE rather than Terraform state needs no address at all.
type ClusterCheck resource.TestCheckFunc

// CheckState runs c, ignoring the state it is handed.
func (c ClusterCheck) CheckState(_ context.Context, _ statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	resp.Error = c(nil)
}
