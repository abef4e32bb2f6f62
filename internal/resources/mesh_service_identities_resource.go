package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

var (
	_ resource.ResourceWithConfigure   = (*meshServiceIdentitiesResource)(nil)
	_ resource.ResourceWithIdentity    = (*meshServiceIdentitiesResource)(nil)
	_ resource.ResourceWithImportState = (*meshServiceIdentitiesResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*meshServiceIdentitiesResource)(nil)
)

// meshServiceIdentitiesType: MeshServices are namespaced.
var meshServiceIdentitiesType = &typeInfo{
	name:     "mesh_service_identities",
	kinds:    []kube.Kind{kube.KumaMeshService},
	shape:    identityShape{namespaced: true},
	importID: importIDForm{namespaced: true, note: ", e.g. \"west/shop/cart\""},
	planChecks: []string{
		"that the MeshService exists",
	},
}

// meshServiceIdentitiesObjectIdentity is the identity of the MeshService m names.
func meshServiceIdentitiesObjectIdentity(m meshServiceIdentitiesResourceModel) objectIdentity {
	return objectIdentity{Cluster: m.Cluster.ValueString(), Namespace: m.Namespace.ValueString(), Name: m.Name.ValueString()}
}

// NewMeshServiceIdentitiesResource manages spec.identities of a Kuma
// MeshService (Kuma's MeshService identity design: the SPIFFE IDs a client verifies in the SAN of the
// service's certificates).
func NewMeshServiceIdentitiesResource() resource.Resource {
	return &meshServiceIdentitiesResource{typeInfo: meshServiceIdentitiesType}
}

type meshServiceIdentitiesResource struct {
	providerdata.ResourceBase
	*typeInfo
}

func (r *meshServiceIdentitiesResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.write(ctx, req.Plan, "set", &resp.State, resp.Identity, &resp.Diagnostics)
}

func (r *meshServiceIdentitiesResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.write(ctx, req.Plan, "update", &resp.State, resp.Identity, &resp.Diagnostics)
}

// write applies the planned identities to the existing MeshService. The
// apply carries the object's UID, which the API server treats as a
// precondition: a server-side apply to a missing object would create a
// MeshService holding nothing but identities.
func (r *meshServiceIdentitiesResource) write(ctx context.Context, planned tfsdk.Plan, verb string,
	state *tfsdk.State, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics) {
	var plan meshServiceIdentitiesResourceModel
	diags.Append(planned.Get(ctx, &plan)...)
	if diags.HasError() {
		return
	}
	client := r.Data.Client(plan.Cluster, diags)
	if client == nil {
		return
	}
	action := verb + " the identities of " + plan.describe(client.DisplayName())
	existing, err := client.Get(ctx, kube.KumaMeshService, plan.Namespace.ValueString(), plan.Name.ValueString())
	if kube.IsNotFound(err) {
		diags.Append(meshServiceNotFound(plan, client.DisplayName(), "Could not "+action))
		return
	}
	if err != nil {
		diags.Append(kube.Diagnostic(err, action))
		return
	}
	obj, d := meshServiceIdentitiesObjectFromModel(ctx, plan)
	diags.Append(d...)
	if diags.HasError() {
		return
	}
	obj.SetUID(existing.GetUID())
	if _, err := client.Apply(ctx, kube.KumaMeshService, obj, plan.ForceConflicts.ValueBool()); err != nil {
		if kube.IsUIDMismatch(err) {
			diags.Append(meshServiceNotFound(plan, client.DisplayName(), "Could not "+action+" (it was deleted meanwhile)"))
			return
		}
		diags.Append(kube.Diagnostic(err, action))
		return
	}
	plan.ID = types.StringValue(resourceID(plan.Cluster, plan.Namespace.ValueString()+"/"+plan.Name.ValueString()))
	diags.Append(state.Set(ctx, &plan)...)
	diags.Append(meshServiceIdentitiesObjectIdentity(plan).set(ctx, meshServiceIdentitiesType.shape, identity)...)
}

// meshServiceNotFound is the error for a MeshService that does not exist.
func meshServiceNotFound(m meshServiceIdentitiesResourceModel, clusterName, lead string) diag.Diagnostic {
	return diag.NewAttributeErrorDiagnostic(path.Root("name"), "MeshService Not Found", fmt.Sprintf(
		"%s: MeshService %q does not exist in namespace %q of cluster %q. This resource sets only spec.identities "+
			"of an existing MeshService, which Kuma creates for a Kubernetes Service or you define (for a service "+
			"of a federated peer): create it first, and make this resource depend on what creates it.",
		lead, m.Name.ValueString(), m.Namespace.ValueString(), clusterName))
}

func (r *meshServiceIdentitiesResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state meshServiceIdentitiesResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// The identity is known from state: the framework requires one from
	// every way out of Read (object gone, connection not known yet), also
	// when the prior state holds none (written by Terraform < 1.12).
	resp.Diagnostics.Append(meshServiceIdentitiesObjectIdentity(state).setIfMissing(ctx, meshServiceIdentitiesType.shape, resp.Identity)...)
	client := r.Data.ReadClient(ctx, state.Cluster, r.object(state.ID), &resp.Diagnostics)
	if client == nil {
		return
	}
	obj, err := client.Get(ctx, kube.KumaMeshService, state.Namespace.ValueString(), state.Name.ValueString())
	if kube.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, "read the identities of "+state.describe(client.DisplayName())))
		return
	}
	resp.Diagnostics.Append(setMeshServiceIdentitiesFromObject(ctx, &state, obj)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(meshServiceIdentitiesObjectIdentity(state).set(ctx, meshServiceIdentitiesType.shape, resp.Identity)...)
}

// Delete gives spec.identities back: an apply of nothing under the
// provider's field manager releases the field, which the API server then
// removes unless another manager holds it too. The MeshService stays.
func (r *meshServiceIdentitiesResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state meshServiceIdentitiesResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	client := r.Data.Client(state.Cluster, &resp.Diagnostics)
	if client == nil {
		return
	}
	action := "release the identities of " + state.describe(client.DisplayName())
	obj, err := client.Get(ctx, kube.KumaMeshService, state.Namespace.ValueString(), state.Name.ValueString())
	if kube.IsNotFound(err) || kube.IsCRDNotInstalled(err) {
		return
	}
	if err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, action))
		return
	}
	if err := releaseFields(ctx, client, kube.KumaMeshService, obj); err != nil {
		resp.Diagnostics.Append(kube.Diagnostic(err, action))
	}
}

func (r *meshServiceIdentitiesResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, ok := r.importTarget(ctx, r.Data, req, &resp.Diagnostics)
	if !ok {
		return
	}
	cluster := clusterValue(id.Cluster)
	_, obj := importedObject(ctx, r.Data, cluster, kube.KumaMeshService, id.Namespace, id.Name,
		fmt.Sprintf("the identities of MeshService %s/%s", id.Namespace, id.Name), &resp.Diagnostics)
	if obj == nil {
		return
	}
	state, d := meshServiceIdentitiesStateFromObject(ctx, cluster, obj)
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(id.set(ctx, meshServiceIdentitiesType.shape, resp.Identity)...)
}
