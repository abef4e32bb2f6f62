package resources

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/workloadtrust"
)

var (
	_ resource.ResourceWithConfigure      = (*clusterSPIFFEIDResource)(nil)
	_ resource.ResourceWithIdentity       = (*clusterSPIFFEIDResource)(nil)
	_ resource.ResourceWithImportState    = (*clusterSPIFFEIDResource)(nil)
	_ resource.ResourceWithModifyPlan     = (*clusterSPIFFEIDResource)(nil)
	_ resource.ResourceWithValidateConfig = (*clusterSPIFFEIDResource)(nil)
)

// clusterSPIFFEIDType: ClusterSPIFFEIDs are cluster-scoped.
var clusterSPIFFEIDType = &typeInfo{
	name:     "cluster_spiffe_id",
	kinds:    []kube.Kind{kube.ClusterSPIFFEID},
	shape:    identityShape{},
	importID: importIDForm{note: ", e.g. \"west/workloads\""},
	planChecks: []string{
		"that spiffe_id_template renders an ID of the cluster's trust domain",
		"that every federates_with trust domain is declared by a federation of the cluster",
	},
}

// NewClusterSPIFFEIDResource manages a spire-controller-manager
// ClusterSPIFFEID, and waits until the workloads it selects federate.
func NewClusterSPIFFEIDResource() resource.Resource {
	return &clusterSPIFFEIDResource{typeInfo: clusterSPIFFEIDType}
}

type clusterSPIFFEIDResource struct {
	providerdata.ResourceBase
	*typeInfo
}

// Defaults of the timeouts: long enough for SPIRE to fetch a peer's first
// bundle (its refresh hint), then for the controller's next reconcile.
const defaultClusterSPIFFEIDTimeout = 5 * time.Minute

func (r *clusterSPIFFEIDResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan clusterSPIFFEIDResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.Client(plan.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	existing, err := client.Get(ctx, kube.ClusterSPIFFEID, "", plan.Name.ValueString())
	if err != nil && !kube.IsNotFound(err) {
		resp.Diagnostics.Append(kube.Diagnostic(err, "create the "+plan.describe(client.DisplayName())))
		return
	}
	if err == nil && !adoptGuard(existing, client.FieldManager, path.Root("name"), fmt.Sprintf(
		"The %s exists already and this configuration did not create it. Import it (`terraform import` with ID %q, "+
			"or an `import` block) to manage it, or use zerotrust_cluster_spiffe_id_federation to add only federation to it.",
		plan.describe(client.DisplayName()), resourceID(plan.Cluster, plan.Name.ValueString())), &resp.Diagnostics) {
		return
	}
	// What the plan could only warn about (an earlier resource of this
	// apply may have declared the federation) is refused now, before
	// anything is written.
	if refuseUndeclaredTrustDomains(ctx, r.Data, client, plan.Cluster, plan.SpireServer, plan.TrustDomains(), &resp.Diagnostics); resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, defaultClusterSPIFFEIDTimeout)
	resp.Diagnostics.Append(d...)
	// A create whose wait fails returns no state: nothing is tainted, and
	// the next apply applies the same object again (which changes nothing on
	// the cluster) and waits again; the object is not torn down meanwhile.
	r.apply(ctx, client, &plan, timeout, "create", &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	resp.Diagnostics.Append(clusterSPIFFEIDObjectIdentity(plan).set(ctx, clusterSPIFFEIDType.shape, resp.Identity)...)
}

func (r *clusterSPIFFEIDResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan clusterSPIFFEIDResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.Client(plan.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	// As in Create; an unchanged federates_with was accepted by an earlier
	// apply, and a federation lost since is the wait's to name.
	var prior types.Set
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("federates_with"), &prior)...)
	if !prior.Equal(plan.FederatesWith) {
		refuseUndeclaredTrustDomains(ctx, r.Data, client, plan.Cluster, plan.SpireServer, plan.TrustDomains(), &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Update(ctx, defaultClusterSPIFFEIDTimeout)
	resp.Diagnostics.Append(d...)
	r.apply(ctx, client, &plan, timeout, "update", &resp.Diagnostics)
	// An update that was applied but whose workloads do not federate yet
	// keeps the new spec with the problems found, which the next plan shows
	// and the next apply waits for again.
	if plan.ID.IsUnknown() {
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	resp.Diagnostics.Append(clusterSPIFFEIDObjectIdentity(plan).set(ctx, clusterSPIFFEIDType.shape, resp.Identity)...)
}

// apply writes the object and waits until its workloads federate. It sets
// m.ID once the object is applied (left unknown when the apply failed) and
// m.FederationProblems to what the wait left.
func (r *clusterSPIFFEIDResource) apply(ctx context.Context, client *kube.Client, m *clusterSPIFFEIDResourceModel,
	timeout time.Duration, verb string, diags *diag.Diagnostics) {
	action := verb + " the " + m.describe(client.DisplayName())
	obj, d := clusterSPIFFEIDObjectFromModel(ctx, *m)
	diags.Append(d...)
	if diags.HasError() {
		return
	}
	if _, err := client.Apply(ctx, kube.ClusterSPIFFEID, obj, m.ForceConflicts.ValueBool()); err != nil {
		diags.Append(kube.Diagnostic(err, action))
		return
	}
	m.ID = types.StringValue(resourceID(m.Cluster, m.Name.ValueString()))
	m.FederationProblems = types.ListValueMust(types.StringType, nil)
	tds := m.TrustDomains()
	if len(tds) == 0 {
		return // nothing to federate: no SPIRE to ask
	}
	m.FederationProblems = waitWorkloadsFederate(ctx, r.Data, client, m.SpireServer, m.Name.ValueString(),
		tds, timeout, verb, diags)
}

func (r *clusterSPIFFEIDResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state clusterSPIFFEIDResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(clusterSPIFFEIDObjectIdentity(state).setIfMissing(ctx, clusterSPIFFEIDType.shape, resp.Identity)...)
	client := r.Data.ReadClient(ctx, state.Cluster, r.object(state.ID), &resp.Diagnostics)
	if client == nil {
		return
	}
	obj, err := client.GetForRefresh(ctx, kube.ClusterSPIFFEID, "", state.Name.ValueString())
	if kube.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "read the "+state.describe(client.DisplayName())))
		return
	}
	resp.Diagnostics.Append(setClusterSPIFFEIDFromObject(ctx, &state, obj)...)
	r.refreshProblems(ctx, client, &state)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(clusterSPIFFEIDObjectIdentity(state).set(ctx, clusterSPIFFEIDType.shape, resp.Identity)...)
}

// refreshProblems asks whether the workloads still federate, with what the
// SPIRE server holds asked once per cluster and walk. A SPIRE server that
// cannot be asked keeps the prior answer.
func (r *clusterSPIFFEIDResource) refreshProblems(ctx context.Context, client *kube.Client, m *clusterSPIFFEIDResourceModel) {
	if m.FederationProblems.IsNull() || m.FederationProblems.IsUnknown() {
		m.FederationProblems = types.ListValueMust(types.StringType, nil)
	}
	tds := m.TrustDomains()
	if len(tds) == 0 {
		m.FederationProblems = types.ListValueMust(types.StringType, nil)
		return
	}
	server, d := spireserverattr.ServerFrom(ctx, client, r.Data.SpireNamespace, m.SpireServer)
	if d.HasError() {
		return
	}
	spire, err := workloadSPIRE(ctx, client, server)
	if err == nil {
		var problems map[string][]workloadtrust.Problem
		problems, err = workloadtrust.CheckWith(ctx, client, spire, []workloadtrust.Want{{Name: m.Name.ValueString(), FederatesWith: tds}})
		if err == nil {
			m.FederationProblems = problemList(problems[m.Name.ValueString()])
			return
		}
	}
	tflog.Warn(ctx, "whether the workloads federate could not be asked; keeping the prior answer", map[string]any{
		"cluster_spiffe_id": m.Name.ValueString(), "spire_server": server.String(), "error": err.Error()})
}

// Delete deletes the ClusterSPIFFEID; spire-controller-manager then deletes
// the entries it rendered from it.
func (r *clusterSPIFFEIDResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state clusterSPIFFEIDResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.Client(state.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	err := client.Delete(ctx, kube.ClusterSPIFFEID, "", state.Name.ValueString())
	if err != nil && !kube.IsNotFound(err) && !kube.IsCRDNotInstalled(err) {
		resp.Diagnostics.Append(kube.Diagnostic(err, "delete the "+state.describe(client.DisplayName())))
	}
}

func (r *clusterSPIFFEIDResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, ok := r.importTarget(ctx, r.Data, req, &resp.Diagnostics)
	if !ok {
		return
	}
	cluster := clusterValue(id.Cluster)
	_, obj := importedObject(ctx, r.Data, cluster, kube.ClusterSPIFFEID, "", id.Name,
		"the ClusterSPIFFEID "+id.Name, &resp.Diagnostics)
	if obj == nil {
		return
	}
	state, d := clusterSPIFFEIDStateFromObject(ctx, cluster, obj)
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(id.set(ctx, clusterSPIFFEIDType.shape, resp.Identity)...)
}
