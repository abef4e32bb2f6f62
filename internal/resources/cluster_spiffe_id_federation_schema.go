package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func (r *clusterSPIFFEIDFederationResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = clusterSPIFFEIDFederationSchema(ctx)
}

func clusterSPIFFEIDFederationSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "The federation (`spec.federatesWith`) of a spire-controller-manager `ClusterSPIFFEID` " +
			"that someone else owns: the default one a Helm chart installs, or one an operator or another team " +
			"manages. The ClusterSPIFFEID must exist; this resource never creates or deletes it and writes " +
			"`spec.federatesWith` only, by server-side apply with the provider's field manager, so its other fields " +
			"stay with their managers. Adopting an object whose `federatesWith` already equals `federates_with` " +
			"plans nothing and changes nothing on the cluster. An object that a `zerotrust_cluster_spiffe_id` with " +
			"the same field manager wrote is refused at plan (an apply of `federatesWith` alone by that manager would " +
			"remove its other fields): set `federates_with` there.\n\n" +
			"`spec.federatesWith` is one value as a whole (an atomic list in the CRD): when another field manager " +
			"set a different list, the apply fails and names it unless `force_conflicts` is `true`. Destroy removes " +
			"only this resource's trust domains: the others stay, written back by a merge patch (which records the " +
			"provider's field manager as their last updater), and the field disappears when none is left.\n\n" +
			"Create and update wait, as `zerotrust_cluster_spiffe_id` does, until the selected workloads federate " +
			"(SPIRE holds every bundle, the controller rendered without failures, every selected pod's entry carries " +
			"the federation). For a ClusterSPIFFEID you manage in full, use `zerotrust_cluster_spiffe_id`.",
		Attributes: map[string]schema.Attribute{
			"id": idAttribute("`<name>` on the provider's `kubernetes` connection, `<cluster>/<name>` otherwise; " +
				"also the import ID."),
			"cluster": clusterAttribute(),
			"name": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "Name of the existing ClusterSPIFFEID. Changing it addresses another object (replacement).",
				Validators:          []validator.String{validate.K8sName()},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"federates_with": schema.SetAttribute{
				Required:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Trust domains the ClusterSPIFFEID's entries federate with (`spec.federatesWith`). " +
					"Not the cluster's own; each declared by a federation of the cluster, as `zerotrust_cluster_spiffe_id`'s " +
					"`federates_with`: one the plan cannot find is a warning there (an earlier resource of the same apply " +
					"may create it), and the apply refuses it before writing. At least one.",
				Validators: []validator.Set{setvalidator.SizeAtLeast(1), setvalidator.ValueStringsAre(validate.TrustDomain())},
			},
			"spire_server": spireserverattr.ResourceAttribute("The SPIRE server pod asked (pod exec) whether the workloads " +
				"federate after create and update. Unset: the cluster's SPIRE server pod, from its " +
				"`spire` settings (the operator's `spire-server-0` by default)."),
			"force_conflicts": forceConflictsAttribute(),
			"timeouts":        timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true}),
		},
	}
}
