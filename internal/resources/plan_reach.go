package resources

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
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
// providerdata.Data.Answers); the checks are skipped in any case, as the
// apply repeats them before it writes.
func planClient(ctx context.Context, data *providerdata.Data, cluster types.String, diags *diag.Diagnostics) *kube.Client {
	client := knownClient(data, cluster)
	if client == nil {
		return nil
	}
	if fastpath.Attempting(ctx) && client.Reachable(ctx) != nil {
		// Answers would claim its one warning in an answer the fast path
		// drops; this diagnostic, never shown, makes it decline, and the
		// framework's plan, asked next, says it.
		diags.AddWarning("Cluster Does Not Answer", "The fast path leaves this plan to the framework.")
		return nil
	}
	if !data.Answers(ctx, client, diags) {
		return nil
	}
	return client
}

// planLookupTimeout bounds the plan-time reads of the cluster: they are a
// courtesy (apply repeats them before writing), so a slow or unreachable
// cluster must not hold the plan for the client's full retry budget.
const planLookupTimeout = 15 * time.Second

// planLookup is the prologue of every plan-time check that asks the
// cluster, the one way a plan reaches a cluster (internal/conventions
// checks that no resource calls planClient, knownClient or
// Clusters.Client at plan itself): planClient's client, and a context
// bounded by timeout for its requests. cancel is always set; client is nil
// when the check cannot ask.
func planLookup(ctx context.Context, data *providerdata.Data, cluster types.String, timeout time.Duration,
	diags *diag.Diagnostics,
) (context.Context, *kube.Client, context.CancelFunc) {
	ctx, client, cancel, _ := planReach(ctx, data, cluster, timeout, diags)
	return ctx, client, cancel
}

// planReach is planLookup that also says why client is nil: silent when
// the cluster's connection is known and the cluster does not answer (asked
// once per walk), which a plan may treat otherwise than a connection known
// only at apply.
func planReach(ctx context.Context, data *providerdata.Data, cluster types.String, timeout time.Duration,
	diags *diag.Diagnostics,
) (_ context.Context, client *kube.Client, cancel context.CancelFunc, silent bool) {
	client = planClient(ctx, data, cluster, diags)
	if client == nil {
		known := knownClient(data, cluster)
		return ctx, nil, func() {}, known != nil && known.Reachable(ctx) != nil
	}
	ctx, cancel = context.WithTimeout(ctx, timeout)
	return ctx, client, cancel, false
}

// knownClient is the client of cluster, nil while its connection is
// unknown or cannot be built.
func knownClient(data *providerdata.Data, cluster types.String) *kube.Client {
	key := providerdata.ClusterKey(cluster)
	if data == nil || data.Clusters == nil || cluster.IsUnknown() || data.Clusters.IsUnknown(key) {
		return nil
	}
	client, err := data.Clusters.Client(key)
	if err != nil {
		return nil
	}
	return client
}

// UnreachableNotes lists every plan-time check the plan skips on a cluster
// that does not answer, by resource type, and what some resources do
// instead: the body of the one warning providerdata.Data.Answers gives.
func UnreachableNotes() string {
	var b strings.Builder
	for _, info := range typeInfos() {
		if len(info.planChecks) > 0 {
			fmt.Fprintf(&b, "  - %s: %s\n", info.name.Full(), strings.Join(info.planChecks, "; "))
		}
	}
	fmt.Fprintf(&b, "  - every resource: %s\n", everyResourcePlanCheck)
	for _, info := range typeInfos() {
		if info.whenUnreachable != "" {
			fmt.Fprintf(&b, "  - instead, %s %s\n", info.name.Full(), info.whenUnreachable)
		}
	}
	return b.String()
}

// warnAtPlan adds to diags, as warnings, the refusals (found) of a plan-time
// lookup of something an earlier resource of the same apply may create,
// which the plan cannot see: each keeps its summary, attribute and words,
// and ends with why (says that the apply asks again and refuses then).
// found's warnings are added as they are. The apply runs the same check
// before it writes and adds its refusals as errors.
func warnAtPlan(found diag.Diagnostics, why string, diags *diag.Diagnostics) {
	for _, d := range found {
		if d.Severity() != diag.SeverityError {
			diags.Append(d)
			continue
		}
		detail := d.Detail() + " " + why
		if withPath, ok := d.(diag.DiagnosticWithPath); ok {
			diags.AddAttributeWarning(withPath.Path(), d.Summary(), detail)
		} else {
			diags.AddWarning(d.Summary(), detail)
		}
	}
}
