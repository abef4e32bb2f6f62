package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func (r *meshServiceIdentitiesResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = meshServiceIdentitiesSchema()
}

func meshServiceIdentitiesSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "The SPIFFE ID identities (`spec.identities`, type `SpiffeID`) of a Kuma `MeshService` " +
			"(`kuma.io/v1alpha1`): the identities a client's proxy accepts in the certificate of the service's " +
			"endpoints. Use it for a MeshService you define for a service of a federated peer, whose workloads " +
			"carry SPIFFE IDs of the peer's trust domain (build them with `provider::zerotrust::spiffe_id`).\n\n" +
			"The MeshService must exist: Kuma creates one per Kubernetes Service, or you create it (for example " +
			"with a `kubernetes_manifest`, which this resource then depends on). This resource never creates or " +
			"deletes it. It writes `spec.identities` only, by server-side apply with the provider's field manager, " +
			"so the object's other fields (ports, selector, state) stay with whoever set them; destroying the " +
			"resource gives `spec.identities` up (the field disappears unless another manager holds it too). " +
			"`spec.identities` is one value as a whole: when another field manager (Kuma's identity sync, for " +
			"instance) already set it, the apply fails and names it, unless `force_conflicts` is `true`. A " +
			"missing MeshService fails the apply, naming it; the plan warns already when the cluster can be asked " +
			"then (a warning, as the same apply may create it).",
		Attributes: map[string]schema.Attribute{
			"id": idAttribute("`<namespace>/<name>` on the provider's `kubernetes` connection, " +
				"`<cluster>/<namespace>/<name>` otherwise; also the import ID."),
			"cluster": clusterAttribute(),
			"namespace": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Namespace of the MeshService. Changing it addresses another object (replacement).",
				Validators:          []validator.String{validate.DNSLabel()},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the MeshService. Changing it addresses another object (replacement).",
				Validators:          []validator.String{validate.K8sName()},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"identities": schema.ListAttribute{
				Required:    true,
				ElementType: types.StringType,
				MarkdownDescription: "SPIFFE IDs the service's endpoints may present, such as " +
					"`spiffe://east.example.com/ns/shop/sa/cart`; a client accepts any one of them. Each becomes " +
					"`{type = SpiffeID, value = <ID>}` in `spec.identities`, in this order. At least one, no " +
					"duplicates. Read back, identities of other types (none exist in `kuma.io/v1alpha1`) are left out.",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.ValueStringsAre(validate.SPIFFEID()),
					listvalidator.UniqueValues(),
				},
			},
			"force_conflicts": forceConflictsAttribute(),
		},
	}
}
