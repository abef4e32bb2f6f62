package resources

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/clusterspiffeid"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func (r *clusterSPIFFEIDResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = clusterSPIFFEIDSchema(ctx)
}

// clusterSPIFFEIDSchema is the spec's attributes (clusterspiffeid, shared
// with the data source) and what only the resource has.
func clusterSPIFFEIDSchema(ctx context.Context) schema.Schema {
	attrs := clusterspiffeid.ResourceAttributes()
	maps.Copy(attrs, map[string]schema.Attribute{
		"id": idAttribute("`<name>` on the provider's `kubernetes` connection, `<cluster>/<name>` otherwise; " +
			"also the import ID."),
		"cluster": clusterAttribute(),
		"name": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "Name of the ClusterSPIFFEID. Changing it replaces the object.",
			Validators:          []validator.String{validate.K8sName()},
			PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
		"spire_server": spireserverattr.ResourceAttribute("The SPIRE server pod asked (pod exec) whether the workloads " +
			"federate, after create and update and at refresh. Unset: `spire-server-0`, container `spire-server`, in " +
			"the provider's `spire.namespace`."),
		"federation_problems": schema.ListAttribute{
			Computed:    true,
			ElementType: types.StringType,
			MarkdownDescription: "Why the selected workloads do not federate as declared, found at the last refresh " +
				"(empty when they do, or when the SPIRE server could not be asked). A plan after a refresh that " +
				"found problems sets it to empty, which the apply brings about by waiting for the repair.",
		},
		"force_conflicts": forceConflictsAttribute(),
		"timeouts":        timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true}),
	})
	return schema.Schema{
		MarkdownDescription: "A spire-controller-manager `ClusterSPIFFEID` (`spire.spiffe.io/v1alpha1`, cluster-scoped): " +
			"the template from which the controller registers the pods it selects with the cluster's SPIRE server, and " +
			"the trust domains their entries federate with (`federates_with`), which is what lets those workloads " +
			"accept the SVIDs of federated peers.\n\n" +
			"Create and update end when the workloads actually federate, not when the object is stored: the cluster's " +
			"SPIRE server holds a bundle of every `federates_with` trust domain, spire-controller-manager rendered the " +
			"entries without failures (`status.stats`), and SPIRE's entry of every selected pod carries the federation " +
			"(asked through pod exec of `spire-server bundle list` and `entry show`, see `spire_server`). SPIRE refuses " +
			"an entry that federates with a trust domain whose bundle it does not hold, so declare each peer's " +
			"federation (`zerotrust_federated_trust_domain`) and make this resource depend on it; a `federates_with` " +
			"trust domain no federation on the cluster declares (and whose bundle the cluster's SPIRE server does not " +
			"hold, as a `zerotrust_spire_bundle` sets it) is a warning at plan (an earlier resource of the same " +
			"apply, such as a `kubernetes_manifest`, may create its ClusterFederatedTrustDomain) and an error at apply, " +
			"asked again before anything is written. A refresh that finds the workloads no " +
			"longer federating (entries without the federation, render failures) plans an update of " +
			"`federation_problems` that names them, and the apply waits for the repair again.\n\n" +
			"To add federation to a ClusterSPIFFEID that a Helm chart or operator owns, without taking the rest of " +
			"the object over, use `zerotrust_cluster_spiffe_id_federation` instead.",
		Attributes: attrs,
	}
}
