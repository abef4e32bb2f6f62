package resources

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// spireBundleDeleteModes are the on_destroy values: SPIRE's modes that end
// the trust (its third, "delete", would delete registration entries).
var spireBundleDeleteModes = []string{spireexec.BundleDeleteDissociate, spireexec.BundleDeleteRestrict}

func (r *spireBundleResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = spireBundleSchema()
}

func spireBundleSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "One peer trust domain's bundle in one cluster's SPIRE server, set by Terraform " +
			"(`spire-server bundle set`, through pod exec) instead of fetched by SPIRE from the peer's bundle " +
			"endpoint: federation for SPIRE servers that cannot reach each other while the machine running " +
			"Terraform reaches every cluster's API server. Read `bundle` from the peer's own cluster (for example " +
			"`data.zerotrust_trust_bundle.<peer>.spiffe_bundle`), never from its endpoint. Registration entries " +
			"federate with the trust domain as with any other (`federates_with` of `zerotrust_cluster_spiffe_id`).\n\n" +
			"Refresh reads the bundles SPIRE holds, once per cluster and Terraform operation. Bundles compare by " +
			"their X.509 and JWT authorities: a sequence number, refresh hint or key order alone plans nothing. A " +
			"bundle SPIRE lost (deleted, a datastore restore) plans setting it again; one someone replaced by hand " +
			"shows as the state, replaced by the configured one.\n\n" +
			"The bundle is only as fresh as the last apply: SPIRE never fetches it by itself. Apply more often than " +
			"the peer's CA rotates (between its prepare and its activate: at least every sixth of its `ca_ttl`); the " +
			"section \"When SPIRE servers cannot reach each other\" of the guide \"Federating N clusters\" says why " +
			"and how. A federation relationship for the " +
			"same trust domain on the cluster (a ClusterFederatedTrustDomain, `federates_with` of " +
			"`zerotrust_spire_federation`) is a plan error: SPIRE would overwrite the bundle from the endpoint, and " +
			"every apply would set it back.",
		Attributes: map[string]schema.Attribute{
			"id": idAttribute("`<trust_domain>` on the provider's `kubernetes` connection, `<cluster>/<trust_domain>` " +
				"otherwise; also the import ID."),
			"cluster": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Key of the provider's `clusters` map naming the cluster whose SPIRE server holds " +
					"the bundle. Unset means the provider's `kubernetes` connection. Changing it replaces the resource.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"trust_domain": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The peer's trust domain, whose bundle this is; not the cluster's own. Changing " +
					"it replaces the resource.",
				Validators:    []validator.String{validate.TrustDomain()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"bundle": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "The peer's SPIFFE bundle (JSON, as `zerotrust_trust_bundle.spiffe_bundle` or " +
					"`spire-server bundle show -format spiffe` print it), validated for `trust_domain` at plan time. " +
					"A new value with the same authorities plans nothing. Null keeps the bundle this resource set last " +
					"(the value of a `zerotrust_trust_bundle` with `on_unreachable = \"warn\"` whose cluster did not " +
					"answer), and is a plan error when it has set none yet. While the resource's own cluster does not " +
					"answer, the plan also keeps the bundle set last, whatever the configuration says: the first run that " +
					"reaches the cluster carries the current one.",
				Validators: []validator.String{validate.SPIFFEBundleFor(path.MatchRoot("trust_domain"))},
			},
			"spire_server": spireserverattr.ResourceAttribute("The SPIRE server pod that holds the bundle (pod exec). " +
				"Unset: the cluster's SPIRE server pod, from its `spire` settings (the operator's `spire-server-0` by default)."),
			"on_destroy": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(spireexec.BundleDeleteDissociate),
				MarkdownDescription: "How destroy deletes the bundle (`spire-server bundle delete -mode`): " +
					"`dissociate` (default) removes the trust domain from the `federates_with` of every registration " +
					"entry that has it, and the entries stay; `restrict` refuses the delete while any entry federates " +
					"with the trust domain, so the destroy fails until they no longer do. One of: `" +
					strings.Join(spireBundleDeleteModes, "`, `") + "`.",
				Validators: []validator.String{stringvalidator.OneOf(spireBundleDeleteModes...)},
			},
		},
	}
}
