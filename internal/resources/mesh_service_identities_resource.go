package resources

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

var (
	_ resource.ResourceWithConfigure   = (*meshServiceIdentitiesResource)(nil)
	_ resource.ResourceWithIdentity    = (*meshServiceIdentitiesResource)(nil)
	_ resource.ResourceWithImportState = (*meshServiceIdentitiesResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*meshServiceIdentitiesResource)(nil)
)

// meshServiceIdentitiesType: MeshServices are namespaced.
var meshServiceIdentitiesType = &kubeType[meshServiceIdentitiesResourceModel]{
	typeInfo: &typeInfo{
		name:         typename.MeshServiceIdentities,
		sharesObject: true,
		kinds:        []kube.Kind{kube.KumaMeshService},
		shape:        identityShape{namespaced: true},
		importID:     importIDForm{namespaced: true, note: ", e.g. \"west/shop/cart\""},
		planChecks: []string{
			"that the MeshService exists",
		},
	},
	ref: func(m *meshServiceIdentitiesResourceModel) modelRef {
		return modelRef{id: &m.ID, cluster: m.Cluster, namespace: m.Namespace, name: m.Name}
	},
	fromObject: func(ctx context.Context, cluster types.String, obj *unstructured.Unstructured, _ *kube.Client) (meshServiceIdentitiesResourceModel, diag.Diagnostics) {
		return meshServiceIdentitiesStateFromObject(ctx, cluster, obj)
	},
	refresh: setMeshServiceIdentitiesFromObject,
	readWhat: func(m meshServiceIdentitiesResourceModel, clusterName string) string {
		return "the identities of " + m.describe(clusterName)
	},
	importWhat: func(id objectIdentity) string {
		return fmt.Sprintf("the identities of MeshService %s/%s", id.Namespace, id.Name)
	},
	deleting: releaseMeshServiceIdentities,
}

// NewMeshServiceIdentitiesResource manages spec.identities of a Kuma
// MeshService (Kuma's MeshService identity design: the SPIFFE IDs a client verifies in the SAN of the
// service's certificates).
func NewMeshServiceIdentitiesResource() resource.Resource {
	return &meshServiceIdentitiesResource{kubeResource[meshServiceIdentitiesResourceModel]{kubeType: meshServiceIdentitiesType}}
}

type meshServiceIdentitiesResource struct {
	kubeResource[meshServiceIdentitiesResourceModel]
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
	plan, client := r.applying(ctx, planned, diags)
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
	r.store(ctx, &plan, state, identity, diags)
}

// meshServiceNotFound is the error for a MeshService that does not exist.
func meshServiceNotFound(m meshServiceIdentitiesResourceModel, clusterName, lead string) diag.Diagnostic {
	return diag.NewAttributeErrorDiagnostic(path.Root("name"), "MeshService Not Found", fmt.Sprintf(
		"%s: MeshService %q does not exist in namespace %q of cluster %q. This resource sets only spec.identities "+
			"of an existing MeshService, which Kuma creates for a Kubernetes Service or you define (for a service "+
			"of a federated peer): create it first, and make this resource depend on what creates it.",
		lead, m.Name.ValueString(), m.Namespace.ValueString(), clusterName))
}

// releaseMeshServiceIdentities is the descriptor's deleting: it gives
// spec.identities back. An apply of nothing under the provider's field
// manager releases the field, which the API server then removes unless
// another manager holds it too. The MeshService stays.
func releaseMeshServiceIdentities(ctx context.Context, _ *kubeResource[meshServiceIdentitiesResourceModel], client *kube.Client,
	state meshServiceIdentitiesResourceModel, diags *diag.Diagnostics,
) {
	action := "release the identities of " + state.describe(client.DisplayName())
	obj, err := client.Get(ctx, kube.KumaMeshService, state.Namespace.ValueString(), state.Name.ValueString())
	if kube.IsNotFound(err) || kube.IsCRDNotInstalled(err) {
		return
	}
	if err != nil {
		diags.Append(kube.Diagnostic(err, action))
		return
	}
	if err := releaseFields(ctx, client, kube.KumaMeshService, obj); err != nil {
		diags.Append(kube.Diagnostic(err, action))
	}
}
