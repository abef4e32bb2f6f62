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
			"the apply asks the cluster again (one attempt bounded as above: a change on a cluster that still does "+
			"not answer fails at once, naming it). Check that the API server is up and reachable "+
			"from where Terraform runs, with the provider's connection settings for this cluster.",
		err.Cluster, err.Host, kube.PlanReachTimeout, err.Err, err.Cluster, d.UnreachableNotes))
}

// KeepsState reports whether the refresh of object (its type and id, as
// `zerotrust_istio_csr "east/istio-system"`) on client's cluster keeps the state of the last run
// instead of reading the cluster: when the cluster does not answer at all
// (one bounded probe per walk, kube.Client.Reachable) and its on_unreachable
// is "warn". It then adds the refresh warning for that object. With
// "error", the Read goes on and its request fails at once, naming the
// cluster (kube.UnreachableError), which fails the run.
//
// The warning's summary names the cluster and is the same for every object
// of it, because Terraform calls Read once per object and no Read knows how
// many others share the fate: Terraform's CLI (1.16) shows warnings with one
// summary once, the first in full, with "(and N more similar warnings
// elsewhere)", which makes it one warning per cluster that counts the
// objects kept. The detail names the object, so that two objects of one
// resource block (for_each) are two warnings, not one Terraform merges.
func (d *Data) KeepsState(ctx context.Context, client *kube.Client, object string, diags *diag.Diagnostics) bool {
	unreachable := d.goesOnWithout(ctx, client)
	if unreachable == nil {
		return false
	}
	diags.AddWarning(fmt.Sprintf("Cluster %q Unreachable: State Kept Without Refresh", unreachable.Cluster), fmt.Sprintf(
		"Cluster %q at %s did not answer within %s: %v\n\n%s keeps the state of the last run: it was not "+
			"refreshed, so whatever changed on the cluster since (its drift) is unknown until the cluster answers. "+
			"Every object of the cluster is kept the same way; Terraform shows this warning once per cluster and "+
			"counts the other objects kept in \"more similar warnings\". A change planned on the cluster fails at "+
			"apply, at once, naming the cluster; changes on the other clusters are applied. The next run that reaches "+
			"the cluster refreshes these objects and plans what changed meanwhile. Set on_unreachable = %q for this "+
			"cluster (or the provider) to fail the run instead.",
		unreachable.Cluster, unreachable.Host, kube.PlanReachTimeout, unreachable.Err, object, OnUnreachableError))
	return true
}

// goesOnWithout returns the *kube.UnreachableError of client's cluster when
// it does not answer at all and its on_unreachable lets the run go on
// without it ("warn"), else nil: what KeepsState and SkipsRead both ask
// before they warn.
func (d *Data) goesOnWithout(ctx context.Context, client *kube.Client) *kube.UnreachableError {
	var unreachable *kube.UnreachableError
	if !errors.As(client.Reachable(ctx), &unreachable) || !d.WarnsUnreachable(client) {
		return nil
	}
	return unreachable
}

// SkipsRead reports whether a data source of typeName (zerotrust_<name>)
// skips reading client's cluster: when the cluster does not answer at all
// and its on_unreachable is "warn". It then adds the warning; the data
// source returns its arguments and null for every value it reads (each
// says so in its description), so what depends on it can keep what it has.
// With "error", the read goes on and fails at once, naming the cluster.
func (d *Data) SkipsRead(ctx context.Context, client *kube.Client, typeName string, diags *diag.Diagnostics) bool {
	unreachable := d.goesOnWithout(ctx, client)
	if unreachable == nil {
		return false
	}
	diags.AddWarning(fmt.Sprintf("Cluster %q Unreachable: Data Source Not Read", unreachable.Cluster), fmt.Sprintf(
		"Cluster %q at %s did not answer within %s: %v\n\nThis %s was not read: every value it reads from the "+
			"cluster is null in this run. Configuration that uses those values should fall back to what it knew "+
			"before (a variable, or the state of the last run) rather than remove what the values fed. Set "+
			"on_unreachable = %q for this cluster (or the provider) to fail the run instead.",
		unreachable.Cluster, unreachable.Host, kube.PlanReachTimeout, unreachable.Err, typeName, OnUnreachableError))
	return true
}
