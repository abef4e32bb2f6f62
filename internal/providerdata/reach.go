package providerdata

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// unreachableWarned is the walk state of the warning Answers gives: one per
// cluster and walk, whether a resource's plan, a refresh or a data source
// met the dead cluster first.
type unreachableWarned struct{ once sync.Once }

// Answers reports whether client's cluster answers at all (one request
// bounded by kube.PlanReachTimeout, asked once per client). When it does
// not, the first caller on the cluster adds the one warning that names the
// cluster, its address, the error and UnreachableNotes; every caller then
// goes on without the cluster as its own documentation says.
func (d *Data) Answers(ctx context.Context, client *kube.Client, diags *diag.Diagnostics) bool {
	err := client.Reachable(ctx)
	if err == nil {
		return true
	}
	var unreachable *kube.UnreachableError
	if errors.As(err, &unreachable) {
		warned := kube.Attached(client, func() *unreachableWarned { return &unreachableWarned{} })
		warned.once.Do(func() { diags.Append(d.unreachableWarning(unreachable)) })
	}
	return false
}

// unreachableWarning names the cluster, its address, the error and what the
// plan does without it.
func (d *Data) unreachableWarning(err *kube.UnreachableError) diag.Diagnostic {
	return diag.NewWarningDiagnostic("Cluster Unreachable: Plan-Time Checks Skipped", fmt.Sprintf(
		"Cluster %q at %s did not answer within %s: %v\n\nThe plan asks it nothing more and goes on without "+
			"the checks that need it, for every object planned on cluster %q (this warning is given once per "+
			"cluster and plan):\n%sWhat they would have caught shows only when the apply or the operator fails; "+
			"the apply asks the cluster again, with its retries. Check that the API server is up and reachable "+
			"from where Terraform runs, with the provider's connection settings for this cluster.",
		err.Cluster, err.Host, kube.PlanReachTimeout, err.Err, err.Cluster, d.UnreachableNotes))
}
