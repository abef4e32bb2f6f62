package resources

import (
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// NewIstioCSRListResource lists the IstioCSRs of every namespace of the
// scope's clusters, for `terraform query` to import.
func NewIstioCSRListResource() list.ListResource {
	return newListShell(istioCSRType,
		"The IstioCSRs (always named `default`, one per namespace) of the provider's clusters.",
		map[string]listschema.Attribute{"namespace": listschema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Only the IstioCSR of this namespace. Unset lists every namespace.",
			Validators:          []validator.String{validate.DNSLabel()},
		}},
		func(config istioCSRListConfig) listConverter {
			return istioCSRType.listedWhere(func(obj *unstructured.Unstructured) bool {
				// The CRD accepts no other name; another object is nothing this
				// resource could manage.
				return obj.GetName() == istioCSRName &&
					(config.Namespace.IsNull() || obj.GetNamespace() == config.Namespace.ValueString())
			})
		})
}

type istioCSRListConfig struct {
	listScope
	Namespace types.String `tfsdk:"namespace"`
}
