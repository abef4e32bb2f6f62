package resources

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
)

// TestPlanClientLeavesTheOnceWarningToTheFramework: a fast path's plan of
// an object on a cluster that does not answer gets no client and a
// diagnostic that makes it decline, without claiming the one warning per
// cluster and walk; the framework's plan after it says that warning.
func TestPlanClientLeavesTheOnceWarningToTheFramework(t *testing.T) {
	data := deadClusters()
	dead := types.StringValue("dead")
	plan := func(fast bool) diag.Diagnostics {
		var diags diag.Diagnostics
		ctx := t.Context()
		if fast {
			ctx = fastpath.Attempt(ctx)
		}
		if client := planClient(ctx, data, dead, &diags); client != nil {
			t.Fatal("a client of a cluster that does not answer")
		}
		return diags
	}
	if diags := plan(true); len(diags) != 1 || diags[0].Summary() == "Cluster Unreachable: Plan-Time Checks Skipped" {
		t.Fatalf("fast attempt: %v, want one diagnostic that is not the cluster's warning", diags)
	}
	if diags := plan(false); len(diags) != 1 || diags[0].Summary() != "Cluster Unreachable: Plan-Time Checks Skipped" {
		t.Fatalf("framework's plan after it: %v, want the cluster's warning", diags)
	}
	if diags := plan(false); len(diags) != 0 {
		t.Fatalf("second framework plan: %v, want the warning said once", diags)
	}
}
