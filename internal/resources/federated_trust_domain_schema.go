package resources

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func (r *federatedTrustDomainResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = federatedTrustDomainSchema(ctx)
}

// federatedTrustDomainSchemaOnce is the schema, built once for the helpers
// that read it (attribute types, the list's validation).
var federatedTrustDomainSchemaOnce = sync.OnceValue(func() schema.Schema {
	return federatedTrustDomainSchema(context.Background())
})

// deleteBundleOnDestroyDefault is delete_bundle_on_destroy when unset, also
// in the state of adopted objects.
const deleteBundleOnDestroyDefault = true

func federatedTrustDomainSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "A SPIRE `ClusterFederatedTrustDomain` (`spire.spiffe.io/v1alpha1`, cluster-scoped): tells " +
			"spire-controller-manager to federate the cluster's SPIRE server with a peer trust domain, and hands it " +
			"the peer's bootstrap trust bundle.\n\n" +
			"`trust_domain_bundle` is a **bootstrap** value: spire-controller-manager reads it only when it first sees " +
			"the object; afterwards SPIRE refreshes the bundle from the peer's bundle endpoint. So after creation a " +
			"changed bundle (for example a rotated CA read by `zerotrust_trust_bundle`) plans no change. Updates never " +
			"send the bundle, because a stale bundle sent with an endpoint change would overwrite the fresher one SPIRE " +
			"holds. When SPIRE loses the bundle or can no longer refresh it (see `spire_trust`), the plan shows it and " +
			"the apply seeds SPIRE again from the configured `trust_domain_bundle`.\n\n" +
			"There is no webhook in many installations, and an invalid object is accepted by the API server and then " +
			"silently skipped by the controller, so every rule the controller applies is checked at plan time.\n\n" +
			federationSourcesDoc,
		Attributes: map[string]schema.Attribute{
			"id":      idAttribute("`<name>` on the default connection, `<cluster>/<name>` otherwise; also the import ID."),
			"cluster": clusterAttribute(),
			"name": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Object name. Defaults to the trust domain with `_` replaced by `-` (object names " +
					"are DNS subdomains). Changing it replaces the object.",
				Validators:    []validator.String{validate.K8sName()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
			},
			"trust_domain": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The peer trust domain to federate with, e.g. `west.example.org` (no `spiffe://`). " +
					"Changing it replaces the object. Refused at plan when `federates_with` of the cluster's " +
					"`zerotrust_spire_federation` lists it too.",
				Validators:    []validator.String{validate.TrustDomain()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"bundle_endpoint_url": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The peer's SPIFFE bundle endpoint: an `https://` URL with a host and no user info.",
				Validators:          []validator.String{validate.HTTPSURL()},
			},
			"bundle_endpoint_profile": schema.SingleNestedAttribute{
				Required:            true,
				MarkdownDescription: "How the bundle endpoint authenticates itself.",
				Attributes: map[string]schema.Attribute{
					"type": schema.StringAttribute{
						Required: true,
						MarkdownDescription: "`https_spiffe` (the endpoint presents an SVID checked against the peer's " +
							"bundle; needs `endpoint_spiffe_id`) or `https_web` (a Web PKI certificate; no `endpoint_spiffe_id`). " +
							"A bundle a SPIRE BundlePublisher writes to object storage is read with `https_web`: `https_spiffe` " +
							"is refused at plan for a `bundle_endpoint_url` on an S3, GCS or Azure Blob Storage host, or one a " +
							"`zerotrust_spire_server` read reports in `bundle_publishers`, since an object store cannot present " +
							"the peer's SPIFFE ID.",
						Validators: []validator.String{stringvalidator.OneOf(spireexec.ProfileHTTPSSPIFFE, spireexec.ProfileHTTPSWeb)},
					},
					"endpoint_spiffe_id": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "SPIFFE ID of the bundle endpoint server, usually `spiffe://<trust_domain>/spire/server`. " +
							"Required for `https_spiffe`, refused for `https_web`.",
						Validators: []validator.String{validate.SPIFFEID()},
					},
				},
			},
			"trust_domain_bundle": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "The peer's SPIFFE trust bundle (JSON, as `zerotrust_trust_bundle.spiffe_bundle` or " +
					"`spire-server bundle show -format spiffe` print it), validated for `trust_domain` at plan time. " +
					"Bootstrap only: sent on create, ignored on later changes, removal from the configuration included " +
					"(see above). Needed for `https_spiffe` unless SPIRE already holds the peer's bundle. Import reads " +
					"the bundle the object still carries, if any; an object adopted without one whose configuration " +
					"sets one plans an in-place update that records the value in state and sends nothing to the object. " +
					"An update that gives an `https_spiffe` federation its first bundle (one created without, for " +
					"example before the peer published its bundle) seeds the cluster's SPIRE server with it when SPIRE " +
					"holds none, with `check_spire` (spire-controller-manager reads the bundle only when it creates the " +
					"relationship).",
				Validators:    []validator.String{validate.SPIFFEBundleFor(path.MatchRoot("trust_domain"))},
				PlanModifiers: []planmodifier.String{bootstrapOnly{}},
			},
			"class_name": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "spire-controller-manager class that acts on the object (`spec.className`); `\"\"` " +
					"means no class. When unset, an object this resource creates gets the cluster's `spire.class_name` " +
					"(its own `spire`, else the provider's: `spire-server-spire` for the Helm chart's defaults), " +
					"and keeps following it while this provider owns the field. An adopted object (imported, or made by " +
					"someone else) keeps the class it has, none included, and the field is not written, so importing " +
					"plans no change: set `class_name` to give it one. On OpenShift an object without the operator's " +
					"class is ignored by its spire-controller-manager.",
			},
			"force_conflicts": forceConflictsAttribute(),
			"wait_for_bundle": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				MarkdownDescription: "After create and update, wait (up to the `timeouts`) until the cluster's SPIRE server " +
					"holds the peer's bundle, asked through pod exec of `spire-server bundle list` (see `spire_server`). " +
					"The object has no status to wait on, and workloads that federate with the peer are refused until " +
					"SPIRE has its bundle. A create (a replacement too) then also waits, within the same timeout, until " +
					"the entries of the cluster's ClusterSPIFFEIDs of the same class that federate with the peer carry " +
					"the federation again: deleting the object makes spire-controller-manager drop it from them, and it " +
					"adds it back only at a later reconcile; what is left when the time is up is a warning. Defaults to " +
					"`false`. A create whose bundle wait times out leaves the object in place and the resource tainted, so " +
					"the next apply replaces it.",
			},
			"delete_bundle_on_destroy": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(deleteBundleOnDestroyDefault),
				MarkdownDescription: "On destroy, also delete the peer's bundle from the SPIRE server (`spire-server bundle " +
					"delete -mode dissociate`, through pod exec, see `spire_server`), once spire-controller-manager has removed " +
					"the federation relationship; registration entries that federate with the peer stop doing so. Defaults to " +
					"`true`, because deleting a ClusterFederatedTrustDomain removes only the relationship: SPIRE keeps the " +
					"peer's bundle, and workloads whose entries federate with the peer keep trusting it. Destroying a " +
					"federation therefore revokes trust. Set `false` to keep the bundle, for example when another mechanism " +
					"(a `zerotrust_spire_federation`, an object managed elsewhere) takes the federation over, or before a " +
					"replacement (a changed `name`, `-replace`), which otherwise leaves workloads without the peer's bundle " +
					"until the new object has bootstrapped it again. If the bundle cannot be deleted (no SPIRE server pod at " +
					"`spire_server`, no right to exec, or the delete timeout passes), destroy still succeeds, with a warning " +
					"saying how to delete it. Where the cluster's SpireServer lists the trust domain in " +
					"`spec.federation.federatesWith`, SPIRE keeps that relationship from its configuration file, and the " +
					"bundle with it: destroy then deletes nothing from SPIRE and says so in a warning.",
			},
			"check_spire": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(true),
				MarkdownDescription: "Ask the cluster's SPIRE server on every refresh whether it still federates with the " +
					"peer and holds a bundle that authenticates the peer's endpoint (see `spire_trust`). Defaults to `true`. " +
					"The answer is asked once per cluster and Terraform operation (`spire-server federation list` and " +
					"`bundle list`, through pod exec, see `spire_server`), shared by every object of the cluster. Where " +
					"SPIRE cannot be asked (no pod, no right to exec) the plan says so once per cluster as a warning and " +
					"carries on; set `false` to stop asking, for example where SPIRE runs outside the cluster.",
			},
			"spire_trust": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "What the cluster's SPIRE server does with the federation, as the last refresh found " +
					"it (`check_spire`): `federated` (it has the federation relationship and holds the peer's bundle), " +
					"`relationship_missing` (the relationship was deleted and spire-controller-manager has not recreated " +
					"it), `bundle_missing` (SPIRE holds no bundle of the peer: deleted by hand or lost with its datastore; " +
					"spire-controller-manager does not re-seed it), `bundle_stale` (the bundle SPIRE holds no longer " +
					"authenticates the peer's https_spiffe endpoint, whose CA changed before SPIRE could fetch the new one: " +
					"a forced CA rotation, a rebuilt peer), or `bundle_revoked` (the endpoint still authenticates, but " +
					"SPIRE holds an unexpired authority the endpoint no longer serves and lacks one it serves: the peer " +
					"revoked its old authority before SPIRE's next poll fetched the new one, a forced rotation whose " +
					"workloads fail mTLS until that poll, up to a quarter of the refresh hint). The endpoint serving a new " +
					"authority SPIRE lacks while SPIRE holds nothing the endpoint dropped is the normal state of a " +
					"scheduled rotation after `prepare`: `federated`, with a plan warning that says how long until " +
					"SPIRE's next poll. Null when SPIRE was not asked, or in the minute after an apply " +
					"that SPIRE may not have acted on yet. Anything but `federated` plans an update to `federated`, and the " +
					"apply repairs it: it waits for the relationship, seeds SPIRE where its bundle is missing or stale " +
					"(`spire-server bundle set`) with what the peer's endpoint serves when the configuration's " +
					"`trust_domain_bundle` authenticates it, else with `trust_domain_bundle` itself (not the value in " +
					"state, which keeps the bootstrap bundle), and has SPIRE refresh the bundle from the peer's endpoint " +
					"(`spire-server federation refresh`). " +
					"An https_spiffe repair needs `trust_domain_bundle` set to the peer's current bundle, for example from " +
					"`zerotrust_trust_bundle`; the plan says so when it is not.",
			},
			"spire_server": spireserverattr.ResourceAttribute("The SPIRE server pod that `check_spire`, `wait_for_bundle` and " +
				"`delete_bundle_on_destroy` ask through pod exec (`spire-server federation ...`, `bundle ...`). Needs " +
				"`get` on `pods` and `get` and `create` on `pods/exec` in that namespace."),
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

// federatedTrustDomainAttrTypes are the types of the schema's top-level
// attributes and blocks, read from the schema once.
// federatedTrustDomainObjectAttrTypes are the attribute types of the object
// attribute at a path, for the null and known object values the model
// builds, from the schema.
var federatedTrustDomainObjectAttrTypes = schemaTypesOf(func() attr.Type {
	return federatedTrustDomainSchemaOnce().Type()
})
