package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// meshServiceIdentityType is the only identity type of kuma.io/v1alpha1
// MeshService identities this resource writes.
const meshServiceIdentityType = "SpiffeID"

type meshServiceIdentitiesResourceModel struct {
	ID             types.String `tfsdk:"id"`
	Cluster        types.String `tfsdk:"cluster"`
	Namespace      types.String `tfsdk:"namespace"`
	Name           types.String `tfsdk:"name"`
	Identities     types.List   `tfsdk:"identities"`
	ForceConflicts types.Bool   `tfsdk:"force_conflicts"`
}

// describe names the object in messages: "MeshService shop/cart on cluster "east"".
func (m meshServiceIdentitiesResourceModel) describe(clusterName string) string {
	return "MeshService " + m.Namespace.ValueString() + "/" + m.Name.ValueString() + " on cluster \"" + clusterName + "\""
}

// meshServiceIdentitiesObjectFromModel is the apply patch: the object's name and
// namespace, and spec.identities, nothing else.
func meshServiceIdentitiesObjectFromModel(ctx context.Context, m meshServiceIdentitiesResourceModel) (*unstructured.Unstructured, diag.Diagnostics) {
	var ids []string
	diags := m.Identities.ElementsAs(ctx, &ids, false)
	items := make([]any, 0, len(ids))
	for _, id := range ids {
		items = append(items, map[string]any{"type": meshServiceIdentityType, "value": id})
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"identities": items}}}
	obj.SetName(m.Name.ValueString())
	obj.SetNamespace(m.Namespace.ValueString())
	return obj, diags
}

// meshServiceSpiffeIDs returns the values of obj's SpiffeID identities, in
// order.
func meshServiceSpiffeIDs(obj *unstructured.Unstructured) []string {
	var ids []string
	items, _, _ := unstructured.NestedSlice(obj.Object, "spec", "identities")
	for _, item := range items {
		identity, _ := item.(map[string]any)
		if objText(identity["type"]) == meshServiceIdentityType {
			ids = append(ids, objText(identity["value"]))
		}
	}
	return ids
}

// setMeshServiceIdentitiesFromObject reads what the object holds into m.
// No SpiffeID identity reads as null, so a configuration that sets some
// plans their apply.
func setMeshServiceIdentitiesFromObject(ctx context.Context, m *meshServiceIdentitiesResourceModel, obj *unstructured.Unstructured) diag.Diagnostics {
	m.Namespace = types.StringValue(obj.GetNamespace())
	m.Name = types.StringValue(obj.GetName())
	m.ID = types.StringValue(resourceID(m.Cluster, obj.GetNamespace()+"/"+obj.GetName()))
	ids := meshServiceSpiffeIDs(obj)
	if len(ids) == 0 {
		m.Identities = types.ListNull(types.StringType)
		return nil
	}
	list, diags := types.ListValueFrom(ctx, types.StringType, ids)
	m.Identities = list
	return diags
}

// meshServiceIdentitiesStateFromObject is the state import and list both
// store for obj.
func meshServiceIdentitiesStateFromObject(ctx context.Context, cluster types.String, obj *unstructured.Unstructured) (
	meshServiceIdentitiesResourceModel, diag.Diagnostics) {
	m := meshServiceIdentitiesResourceModel{Cluster: cluster, ForceConflicts: types.BoolValue(false)}
	diags := setMeshServiceIdentitiesFromObject(ctx, &m, obj)
	return m, diags
}
