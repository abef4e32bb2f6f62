package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// This file is shared by every resource's ModifyPlan: how a plan-time check
// gets its cluster, and what the plan says when that cluster does not answer.

// everyResourcePlanCheck is the plan-time check every resource makes on the
// cluster, besides those its typeInfo names in planChecks.
const everyResourcePlanCheck = "the server-side apply dry run of an update (field-manager conflicts, fields or values the cluster's CRD refuses)"

// planClient is the client plan-time checks on cluster use, or nil when they
// cannot ask: a connection Terraform does not know yet or cannot build
// (silently: the apply reports it), or a cluster that does not answer. The
// latter is said in one warning per cluster and plan (see
// unreachableWarning); the checks are skipped in any case, as the apply
// repeats them before it writes.
func planClient(ctx context.Context, data *providerdata.Data, cluster types.String, diags *diag.Diagnostics) *kube.Client {
	key := providerdata.ClusterKey(cluster)
	if data == nil || data.Clusters == nil || cluster.IsUnknown() || data.Clusters.IsUnknown(key) {
		return nil
	}
	client, err := data.Clusters.Client(key)
	if err != nil {
		return nil
	}
	if err := client.Reachable(ctx); err != nil {
		var unreachable *kube.UnreachableError
		if errors.As(err, &unreachable) && client.FirstTime("plan unreachable warned") {
			diags.Append(unreachableWarning(unreachable))
		}
		return nil
	}
	return client
}

// unreachableWarning names the cluster, its address, the error and every
// plan-time check the plan skips on it.
func unreachableWarning(err *kube.UnreachableError) diag.Diagnostic {
	var b strings.Builder
	for _, info := range typeInfos() {
		if len(info.planChecks) > 0 {
			fmt.Fprintf(&b, "  - zerotrust_%s: %s\n", info.name, strings.Join(info.planChecks, "; "))
		}
	}
	fmt.Fprintf(&b, "  - every resource: %s\n", everyResourcePlanCheck)
	return diag.NewWarningDiagnostic("Cluster Unreachable: Plan-Time Checks Skipped", fmt.Sprintf(
		"Cluster %q at %s did not answer within %s: %v\n\nThe plan asks it nothing more and goes on without "+
			"the checks that need it, for every object planned on cluster %q (this warning is given once per "+
			"cluster and plan):\n%sWhat they would have caught shows only when the apply or the operator fails; "+
			"the apply asks the cluster again, with its retries. Check that the API server is up and reachable "+
			"from where Terraform runs, with the provider's connection settings for this cluster.",
		err.Cluster, err.Host, kube.PlanReachTimeout, err.Err, err.Cluster, b.String()))
}
