package resources

import (
	"context"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// NewClusterSPIFFEIDListResource lists ClusterSPIFFEIDs, for `terraform
// query` to import.
func NewClusterSPIFFEIDListResource() list.ListResource {
	return newListShell(clusterSPIFFEIDType,
		"The spire-controller-manager ClusterSPIFFEIDs on one cluster or all of them.",
		map[string]listschema.Attribute{
			"federates_with": listschema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Only ClusterSPIFFEIDs whose entries federate with this trust domain.",
				Validators:          []validator.String{validate.TrustDomain()},
			},
		},
		func(config clusterSPIFFEIDListConfig) listConverter {
			return func(ctx context.Context, t listTarget, obj *unstructured.Unstructured, includeResource bool) (listedObject, bool, diag.Diagnostics) {
				spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
				if td := config.FederatesWith; !td.IsNull() && !slices.Contains(objStrings(spec, "federatesWith"), td.ValueString()) {
					return listedObject{}, true, nil
				}
				return clusterSPIFFEIDType.listed(ctx, t, obj, includeResource)
			}
		})
}

type clusterSPIFFEIDListConfig struct {
	listScope
	FederatesWith types.String `tfsdk:"federates_with"`
}
