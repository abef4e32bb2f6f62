package resources

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

type clusterSPIFFEIDFederationResourceModel struct {
	ID             types.String   `tfsdk:"id"`
	Cluster        types.String   `tfsdk:"cluster"`
	Name           types.String   `tfsdk:"name"`
	FederatesWith  types.Set      `tfsdk:"federates_with"`
	SpireServer    types.Object   `tfsdk:"spire_server"`
	ForceConflicts types.Bool     `tfsdk:"force_conflicts"`
	Timeouts       timeouts.Value `tfsdk:"timeouts"`
}

func (m clusterSPIFFEIDFederationResourceModel) federatesWith() []string {
	out := stringsOf(m.FederatesWith)
	slices.Sort(out)
	return out
}

// clusterSPIFFEIDFederationObjectFromModel is the apply patch: the name and
// spec.federatesWith, nothing else.
func clusterSPIFFEIDFederationObjectFromModel(m clusterSPIFFEIDFederationResourceModel) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"federatesWith": anySlice(m.federatesWith())}}}
	obj.SetName(m.Name.ValueString())
	return obj
}

// setClusterSPIFFEIDFederationFromObject reads the object's federatesWith
// into m (null when it has none, so a configuration plans setting it).
func setClusterSPIFFEIDFederationFromObject(m *clusterSPIFFEIDFederationResourceModel, obj *unstructured.Unstructured) {
	m.Name = types.StringValue(obj.GetName())
	m.ID = types.StringValue(resourceID(m.Cluster, obj.GetName()))
	spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
	m.FederatesWith = stringSetOrNull(objStrings(spec, "federatesWith"))
}

// clusterSPIFFEIDFederationStateFromObject is the state import and list both store for obj.
func clusterSPIFFEIDFederationStateFromObject(cluster types.String, obj *unstructured.Unstructured) clusterSPIFFEIDFederationResourceModel {
	m := clusterSPIFFEIDFederationResourceModel{
		Cluster:        cluster,
		ForceConflicts: types.BoolValue(false),
		SpireServer:    types.ObjectNull(clusterSPIFFEIDFederationObjectAttrTypes("spire_server")),
		Timeouts:       timeouts.Value{Object: types.ObjectNull(clusterSPIFFEIDFederationObjectAttrTypes("timeouts"))},
	}
	setClusterSPIFFEIDFederationFromObject(&m, obj)
	return m
}

var clusterSPIFFEIDFederationObjectAttrTypes = schemaTypesOf(func() attr.Type {
	return clusterSPIFFEIDFederationSchema(context.Background()).Type()
})
