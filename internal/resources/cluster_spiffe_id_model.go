package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/clusterspiffeid"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

type clusterSPIFFEIDResourceModel struct {
	ID      types.String `tfsdk:"id"`
	Cluster types.String `tfsdk:"cluster"`
	Name    types.String `tfsdk:"name"`
	// Spec is the mapping of the object's spec that the data source
	// zerotrust_cluster_spiffe_id reads with too.
	clusterspiffeid.Spec
	SpireServer        types.Object   `tfsdk:"spire_server"`
	FederationProblems types.List     `tfsdk:"federation_problems"`
	ForceConflicts     types.Bool     `tfsdk:"force_conflicts"`
	Timeouts           timeouts.Value `tfsdk:"timeouts"`
}

// setClusterSPIFFEIDFromObject reads the object into m (the spec as
// clusterspiffeid.Spec.SetFromObject reads it, keeping what m held before
// where the object cannot tell).
func setClusterSPIFFEIDFromObject(ctx context.Context, m *clusterSPIFFEIDResourceModel, obj *unstructured.Unstructured) diag.Diagnostics {
	m.Name = types.StringValue(obj.GetName())
	m.ID = types.StringValue(resourceID(m.Cluster, obj.GetName()))
	return m.SetFromObject(ctx, obj)
}

// clusterSPIFFEIDStateFromObject is the state import and list both store for obj.
func clusterSPIFFEIDStateFromObject(ctx context.Context, cluster types.String, obj *unstructured.Unstructured, _ *kube.Client,
) (clusterSPIFFEIDResourceModel, diag.Diagnostics) {
	m := clusterSPIFFEIDResourceModel{
		Cluster:            cluster,
		ForceConflicts:     types.BoolValue(false),
		SpireServer:        types.ObjectNull(clusterSPIFFEIDObjectAttrTypes("spire_server")),
		FederationProblems: types.ListValueMust(types.StringType, nil),
		Timeouts:           timeouts.Value{Object: types.ObjectNull(clusterSPIFFEIDObjectAttrTypes("timeouts"))},
	}
	diags := setClusterSPIFFEIDFromObject(ctx, &m, obj)
	return m, diags
}

// clusterSPIFFEIDObjectAttrTypes are the attribute types of the object
// attribute at a path, read from the schema.
var clusterSPIFFEIDObjectAttrTypes = schemaTypesOf(func() attr.Type {
	return clusterSPIFFEIDSchema(context.Background()).Type()
})
