package resources

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/clusterspiffeid"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/workloadtrust"
)

// What both resources that write a ClusterSPIFFEID (cluster_spiffe_id and
// cluster_spiffe_id_federation) share about its workloads' federation: the
// plan-time checks of federates_with, and the wait until the workloads
// federate.

// checkWorkloadFederation makes the plan-time checks that ask the cluster:
// the SPIFFE ID template (when given) renders an ID of the cluster's trust
// domain, the entries do not federate with it, and every federates_with
// trust domain is declared by a federation of the cluster, existing or
// planned earlier in this run. An undeclared trust domain is a warning, not
// an error: another provider's resource earlier in the same apply (a
// kubernetes_manifest, a Helm release) may create its
// ClusterFederatedTrustDomain, which this plan cannot see, so
// refuseUndeclaredTrustDomains asks again at apply and refuses there.
func checkWorkloadFederation(ctx context.Context, data *providerdata.Data, cluster types.String, federatesWith types.Set,
	template types.String, spireServer types.Object, diags *diag.Diagnostics) {
	tds := stringsOf(federatesWith)
	if len(tds) != len(federatesWith.Elements()) {
		// A set with a trust domain unknown until apply is left to the
		// apply's wait, which names what is missing.
		tds = nil
	}
	if federatesWith.IsUnknown() || cluster.IsUnknown() {
		return
	}
	ctx, client, cancel := planLookup(ctx, data, cluster, planLookupTimeout, diags)
	defer cancel()
	if client == nil {
		return
	}
	if facts, err := spirefacts.Lookup(ctx, client); err == nil && facts.Found() {
		if own, _ := facts.TrustDomain(); own != "" {
			checkOwnTrustDomain(template, own, tds, client.DisplayName(), diags)
		}
	}
	undeclared, err := undeclaredTrustDomains(ctx, data, client, cluster, spireServer, tds, false)
	if err != nil {
		return // the apply asks again; its wait names what is missing
	}
	warnAtPlan(trustDomainsNotFederated(client.DisplayName(), undeclared), trustDomainCheckedAtApply, diags)
}

// trustDomainCheckedAtApply ends the plan's warning of an undeclared trust
// domain.
const trustDomainCheckedAtApply = "This is a warning at plan because an earlier resource of the same apply may create " +
	"the federation; the apply asks again before it writes the ClusterSPIFFEID, and refuses with this message if it " +
	"still finds none."

// trustDomainsNotFederated is one refusal for each undeclared trust domain
// of the cluster: an error at apply, a warning at plan (warnAtPlan).
func trustDomainsNotFederated(clusterName string, undeclared []string) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, td := range undeclared {
		validate.AttributeError(&diags, path.Root("federates_with"), "Trust Domain Not Federated",
			trustDomainNotFederatedDetail(clusterName, td))
	}
	return diags
}

// trustDomainNotFederatedDetail says that cluster has no federation with td
// and what to do.
func trustDomainNotFederatedDetail(clusterName, td string) string {
	return fmt.Sprintf("Cluster %q has no federation with %q: no ClusterFederatedTrustDomain on the cluster declares it, and "+
		"none is planned before this resource in this run. SPIRE refuses entries that federate with a trust "+
		"domain whose bundle it does not hold, so the workloads would never federate. Declare it "+
		"(zerotrust_federated_trust_domain, federates_with of zerotrust_spire_federation, zerotrust_spire_bundle, or a "+
		"ClusterFederatedTrustDomain another provider creates) and make this resource depend on it, or remove %q "+
		"from federates_with.", clusterName, td, td)
}

// undeclaredTrustDomains is those of tds that no federation of the cluster
// declares: no ClusterFederatedTrustDomain on it (of any class) has the
// trust domain, no federation planned earlier in this walk
// (plannedFederations) names it, and the cluster's SPIRE server (spireServer,
// asked once per walk) holds no bundle of it. The last is what SPIRE
// itself requires of an entry, and how a bundle Terraform carries
// (zerotrust_spire_bundle, no relationship) declares a trust domain in a walk
// that does not plan it again: an apply that changes nothing but the
// ClusterSPIFFEID. SPIRE not answering leaves the trust domains undeclared. The plan lists the cluster's objects once
// per walk (ListOnce); the apply (fresh) lists them again, since an earlier
// resource of the apply may have created one after that list. An error is
// a list the cluster did not answer.
func undeclaredTrustDomains(ctx context.Context, data *providerdata.Data, client *kube.Client, cluster types.String,
	spireServer types.Object, tds []string, fresh bool) ([]string, error) {
	if len(tds) == 0 {
		return nil, nil
	}
	declared := plannedFederationsOf(data).of(cluster.ValueString())
	list := client.ListOnce
	if fresh {
		list = func(ctx context.Context, kind kube.Kind) ([]unstructured.Unstructured, error) {
			return client.List(ctx, kind, "")
		}
	}
	items, err := list(ctx, kube.ClusterFederatedTrustDomain)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		td, _, _ := unstructured.NestedString(item.Object, "spec", "trustDomain")
		declared = append(declared, td)
	}
	var undeclared []string
	for _, td := range tds {
		if !slices.Contains(declared, td) {
			undeclared = append(undeclared, td)
		}
	}
	if len(undeclared) == 0 {
		return nil, nil
	}
	server, d := spireserverattr.ServerFrom(ctx, client, data, spireServer)
	if d.HasError() {
		return undeclared, nil
	}
	if view, err := spireViewOf(ctx, client, server); err == nil {
		undeclared = slices.DeleteFunc(undeclared, func(td string) bool { return view.Bundles[td] != nil })
	}
	return undeclared, nil
}

// refuseUndeclaredTrustDomains runs, at apply and before the
// ClusterSPIFFEID is written, the check the plan could only warn about
// (checkWorkloadFederation): every trust domain of tds is declared by a
// federation of the cluster. Each one that is not is an error with the
// plan's words. A cluster that cannot be listed adds nothing: the apply's
// wait then names what is missing.
func refuseUndeclaredTrustDomains(ctx context.Context, data *providerdata.Data, client *kube.Client, cluster types.String,
	spireServer types.Object, tds []string, diags *diag.Diagnostics) {
	undeclared, err := undeclaredTrustDomains(ctx, data, client, cluster, spireServer, tds, true)
	if err != nil {
		return
	}
	diags.Append(trustDomainsNotFederated(client.DisplayName(), undeclared)...)
}

// checkOwnTrustDomain: the template must render an ID of the cluster's own
// trust domain, and federating with that trust domain is refused.
func checkOwnTrustDomain(template types.String, own string, tds []string, clusterName string, diags *diag.Diagnostics) {
	if slices.Contains(tds, own) {
		validate.AttributeError(diags, path.Root("federates_with"), "Federation With the Own Trust Domain", fmt.Sprintf("%q is the trust domain of cluster %q itself; federates_with lists peers only.", own, clusterName))
	}
	if template.IsNull() || template.IsUnknown() {
		return
	}
	id, err := clusterspiffeid.RenderSPIFFEID(template.ValueString(), own)
	if err == nil && id.TrustDomain().Name() != own {
		validate.AttributeError(diags, path.Root("spiffe_id_template"), "SPIFFE ID Outside the Cluster's Trust Domain", fmt.Sprintf("The template renders %s, but cluster %q is trust domain %q: spire-controller-manager refuses to render "+
			"such an entry. Use {{ .TrustDomain }} for the trust domain.", id, clusterName, own))
	}
}

// clusterSPIFFEIDPoll is how often waitWorkloadsFederate asks again: about
// as often as spire-controller-manager can render a change.
const clusterSPIFFEIDPoll = 2 * time.Second

// waitWorkloadsFederate waits, up to timeout, until the workloads of the
// ClusterSPIFFEID name federate with tds, and returns the problems left
// (federation_problems); an error names them. verb names the timeout.
func waitWorkloadsFederate(ctx context.Context, data *providerdata.Data, client *kube.Client, spireServerValue types.Object,
	name string, tds []string, timeout time.Duration, verb string, diags *diag.Diagnostics) types.List {
	none := types.ListValueMust(types.StringType, nil)
	server, d := spireserverattr.ServerFrom(ctx, client, data, spireServerValue)
	diags.Append(d...)
	if diags.HasError() {
		return none
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	what := fmt.Sprintf("ClusterSPIFFEID %q on cluster %q", name, client.DisplayName())
	want := []workloadtrust.Want{{Name: name, FederatesWith: tds}}
	problems, err := workloadtrust.Wait(ctx, client, server, want, clusterSPIFFEIDPoll)
	if workloadtrust.IsPermanent(err) {
		diags.Append(kube.Diagnostic(err, "check whether the workloads of the "+what+" federate"))
		return none
	}
	if err == nil {
		return none
	}
	if problems == nil {
		// The last question was cut short by the timeout: ask once more
		// for what to record.
		problems, _ = workloadtrust.Check(context.WithoutCancel(ctx), client, server, want)
	}
	diags.AddAttributeError(path.Root("federates_with"), "Workloads Do Not Federate", fmt.Sprintf(
		"The %s was applied, but within the %s timeout its workloads do not federate as it declares (asked %s). "+
			"The object stays as applied; the next apply waits again. Fix what is named below (a peer whose "+
			"federation is missing or whose bundle SPIRE cannot fetch, a template that fails to render), or raise "+
			"timeouts.%s.\n\n%v", what, timeout, server, verb, err))
	return problemList(problems[name])
}

// problemList is the federation_problems value of problems.
func problemList(problems []workloadtrust.Problem) types.List {
	items := make([]string, 0, len(problems))
	for _, p := range problems {
		items = append(items, p.String())
	}
	list, _ := types.ListValueFrom(context.Background(), types.StringType, items)
	return list
}
