package resources

import (
	"slices"

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
			return clusterSPIFFEIDType.listedWhere(func(obj *unstructured.Unstructured) bool {
				spec, _, _ := unstructured.NestedMap(obj.Object, "spec")
				td := config.FederatesWith
				return td.IsNull() || slices.Contains(objStrings(spec, "federatesWith"), td.ValueString())
			})
		})
}

type clusterSPIFFEIDListConfig struct {
	listScope
	FederatesWith types.String `tfsdk:"federates_with"`
}
