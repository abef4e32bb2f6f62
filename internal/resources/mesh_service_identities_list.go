package resources

import (
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// NewMeshServiceIdentitiesListResource lists the MeshServices that have
// SpiffeID identities, for `terraform query` to import.
func NewMeshServiceIdentitiesListResource() list.ListResource {
	return newListShell(meshServiceIdentitiesType,
		"The Kuma MeshServices that have SpiffeID identities (`spec.identities`), on one "+
			"cluster or all of them. MeshServices without any are left out: there is nothing to adopt.",
		map[string]listschema.Attribute{
			"namespace": listschema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Only MeshServices of this namespace. Unset lists every namespace.",
				Validators:          []validator.String{validate.DNSLabel()},
			},
			"trust_domain": listschema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Only MeshServices with at least one SpiffeID identity in this trust domain.",
				Validators:          []validator.String{validate.TrustDomain()},
			},
		},
		func(config meshServiceIdentitiesListConfig) listConverter {
			return meshServiceIdentitiesType.listedWhere(func(obj *unstructured.Unstructured) bool {
				if !config.Namespace.IsNull() && obj.GetNamespace() != config.Namespace.ValueString() {
					return false
				}
				ids := meshServiceSpiffeIDs(obj)
				return len(ids) > 0 && (config.TrustDomain.IsNull() || meshServiceInTrustDomain(ids, config.TrustDomain.ValueString()))
			})
		})
}

type meshServiceIdentitiesListConfig struct {
	listScope
	Namespace   types.String `tfsdk:"namespace"`
	TrustDomain types.String `tfsdk:"trust_domain"`
}

// meshServiceInTrustDomain reports whether any of the SPIFFE IDs is in trust domain td.
func meshServiceInTrustDomain(ids []string, td string) bool {
	for _, id := range ids {
		parsed, err := validate.ParseSPIFFEID(id)
		if err == nil && parsed.TrustDomain().Name() == td {
			return true
		}
	}
	return false
}
