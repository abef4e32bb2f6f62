package resources

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

var (
	_ resource.ResourceWithConfigure   = (*clusterSPIFFEIDFederationResource)(nil)
	_ resource.ResourceWithIdentity    = (*clusterSPIFFEIDFederationResource)(nil)
	_ resource.ResourceWithImportState = (*clusterSPIFFEIDFederationResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*clusterSPIFFEIDFederationResource)(nil)
)

// clusterSPIFFEIDFederationType: the federation of a ClusterSPIFFEID
// (cluster-scoped) someone else owns.
var clusterSPIFFEIDFederationType = &kubeType[clusterSPIFFEIDFederationResourceModel]{
	typeInfo: &typeInfo{
		name:         typename.ClusterSPIFFEIDFederation,
		sharesObject: true,
		kinds:        []kube.Kind{kube.ClusterSPIFFEID},
		shape:        identityShape{},
		importID:     importIDForm{note: ", e.g. \"west/default\""},
		planChecks: []string{
			"that the ClusterSPIFFEID exists",
			"that every federates_with trust domain is declared by a federation of the cluster",
		},
	},
	ref: func(m *clusterSPIFFEIDFederationResourceModel) modelRef {
		return modelRef{id: &m.ID, cluster: m.Cluster, name: m.Name}
	},
	fromObject: func(_ context.Context, cluster types.String, obj *unstructured.Unstructured, _ *kube.Client) (clusterSPIFFEIDFederationResourceModel, diag.Diagnostics) {
		return clusterSPIFFEIDFederationStateFromObject(cluster, obj), nil
	},
	refresh: func(_ context.Context, m *clusterSPIFFEIDFederationResourceModel, obj *unstructured.Unstructured) diag.Diagnostics {
		setClusterSPIFFEIDFederationFromObject(m, obj)
		return nil
	},
	readWhat: func(m clusterSPIFFEIDFederationResourceModel, clusterName string) string {
		return "the federation of the " + m.describe(clusterName)
	},
	importWhat: func(id objectIdentity) string { return "the federation of ClusterSPIFFEID " + id.Name },
	snapshot:   true,
}

// NewClusterSPIFFEIDFederationResource manages spec.federatesWith of an
// existing ClusterSPIFFEID, and waits until its workloads federate.
func NewClusterSPIFFEIDFederationResource() resource.Resource {
	return &clusterSPIFFEIDFederationResource{kubeResource[clusterSPIFFEIDFederationResourceModel]{kubeType: clusterSPIFFEIDFederationType}}
}

type clusterSPIFFEIDFederationResource struct {
	kubeResource[clusterSPIFFEIDFederationResourceModel]
}

func (r *clusterSPIFFEIDFederationResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan clusterSPIFFEIDFederationResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, defaultClusterSPIFFEIDTimeout)
	resp.Diagnostics.Append(d...)
	// As zerotrust_cluster_spiffe_id: a create whose wait fails returns no
	// state, and the next apply writes the same list again and waits again.
	if r.write(ctx, plan, "create", true, timeout, &resp.Diagnostics) && !resp.Diagnostics.HasError() {
		r.store(ctx, &plan, &resp.State, resp.Identity, &resp.Diagnostics)
	}
}

func (r *clusterSPIFFEIDFederationResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan clusterSPIFFEIDFederationResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Update(ctx, defaultClusterSPIFFEIDTimeout)
	resp.Diagnostics.Append(d...)
	var prior types.Set
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("federates_with"), &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// Written but not federating yet: the state keeps what was written.
	if r.write(ctx, plan, "update", !prior.Equal(plan.FederatesWith), timeout, &resp.Diagnostics) {
		r.store(ctx, &plan, &resp.State, resp.Identity, &resp.Diagnostics)
	}
}

// write applies the planned federatesWith to the existing ClusterSPIFFEID
// and waits until its workloads federate. The apply carries the object's
// UID, which the API server treats as a precondition: an apply to a missing
// object would create a ClusterSPIFFEID holding nothing but federatesWith.
// With checkDeclared (a create, or an update that changes the list), it
// first refuses, before anything is written, a trust domain no federation
// of the cluster declares: the plan could only warn, since an earlier
// resource of the same apply may declare it. It reports whether the list
// was written.
func (r *clusterSPIFFEIDFederationResource) write(ctx context.Context, m clusterSPIFFEIDFederationResourceModel, verb string,
	checkDeclared bool, timeout time.Duration, diags *diag.Diagnostics) bool {
	client := r.Data.Client(m.Cluster, diags)
	if client == nil {
		return false
	}
	if checkDeclared {
		if refuseUndeclaredTrustDomains(ctx, r.Data, client, m.Cluster, m.SpireServer, m.federatesWith(), diags); diags.HasError() {
			return false
		}
	}
	action := verb + " the federation of the " + m.describe(client.DisplayName())
	existing, err := client.Get(ctx, kube.ClusterSPIFFEID, "", m.Name.ValueString())
	if kube.IsNotFound(err) {
		diags.Append(clusterSPIFFEIDNotFound(m, client.DisplayName(), "Could not "+action))
		return false
	}
	if err != nil {
		diags.Append(kube.Diagnostic(err, action))
		return false
	}
	obj := clusterSPIFFEIDFederationObjectFromModel(m)
	obj.SetUID(existing.GetUID())
	if _, err := client.Apply(ctx, kube.ClusterSPIFFEID, obj, m.ForceConflicts.ValueBool()); err != nil {
		if kube.IsUIDMismatch(err) {
			diags.Append(clusterSPIFFEIDNotFound(m, client.DisplayName(), "Could not "+action+" (it was deleted meanwhile)"))
			return false
		}
		diags.Append(kube.Diagnostic(err, action))
		return false
	}
	waitWorkloadsFederate(ctx, r.Data, client, m.SpireServer, m.Name.ValueString(), m.federatesWith(), timeout, verb, diags)
	return true
}

// clusterSPIFFEIDNotFound is the error for a ClusterSPIFFEID that does not exist.
func clusterSPIFFEIDNotFound(m clusterSPIFFEIDFederationResourceModel, clusterName, lead string) diag.Diagnostic {
	return diag.NewAttributeErrorDiagnostic(path.Root("name"), "ClusterSPIFFEID Not Found", fmt.Sprintf(
		"%s: ClusterSPIFFEID %q does not exist on cluster %q. This resource sets only spec.federatesWith of an "+
			"existing ClusterSPIFFEID: create it first (zerotrust_cluster_spiffe_id manages one in full), and make "+
			"this resource depend on what creates it.", lead, m.Name.ValueString(), clusterName))
}

// Delete removes this resource's trust domains and nothing else: it gives
// the field up (server-side apply of nothing), and when the list still
// holds them (another manager applied the same list) or lost others' trust
// domains with them (the list is atomic), writes back the others by a
// merge patch. The ClusterSPIFFEID stays.
func (r *clusterSPIFFEIDFederationResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state clusterSPIFFEIDFederationResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.Client(state.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	action := "remove the federation of the " + state.describe(client.DisplayName())
	name := state.Name.ValueString()
	obj, err := client.Get(ctx, kube.ClusterSPIFFEID, "", name)
	if kube.IsNotFound(err) || kube.IsCRDNotInstalled(err) {
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, action))
		return
	}
	ours := state.federatesWith()
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	var others []string
	for _, td := range objStrings(spec, "federatesWith") {
		if !slices.Contains(ours, td) {
			others = append(others, td)
		}
	}
	if err := releaseFields(ctx, client, kube.ClusterSPIFFEID, obj); err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, action))
		return
	}
	after, err := client.Get(ctx, kube.ClusterSPIFFEID, "", name)
	if kube.IsNotFound(err) {
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, action))
		return
	}
	spec, _, _ = unstructured.NestedMap(after.Object, "spec")
	if slices.Equal(objStrings(spec, "federatesWith"), others) {
		return
	}
	var list any = others
	if len(others) == 0 {
		list = nil // a merge patch removes the field
	}
	patch, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"uid": string(after.GetUID())},
		"spec":     map[string]any{"federatesWith": list},
	})
	if _, err := client.MergePatch(ctx, kube.ClusterSPIFFEID, "", name, patch); err != nil && !kube.IsNotFound(err) {
		resp.Diagnostics.Append(kube.Diagnostic(err, action))
	}
}
