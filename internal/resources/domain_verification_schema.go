package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// domainVerificationSchema is the resource schema; the model's attribute
// types are read from it (domainVerificationObjectAttrTypes).
func domainVerificationSchema(ctx context.Context) schema.Schema {
	timeoutsBlock := timeouts.Block(ctx, timeouts.Opts{
		Create:            true,
		CreateDescription: "How long to wait for the controller to issue the token (`status.token`). Default `5m`.",
	})
	if b, ok := timeoutsBlock.(schema.SingleNestedBlock); ok {
		b.MarkdownDescription = "How long to wait. Only creation waits: for the controller's token."
		timeoutsBlock = b
	}
	return schema.Schema{
		MarkdownDescription: "A Kuadrant `DomainVerification` (`kuadrant.dev`, cluster-scoped): asks the Kuadrant " +
			"controller to verify that you control a domain's DNS zone. The controller issues a token; you publish it " +
			"as a TXT record at the domain itself (`txt_record_name`, `txt_record_value`, for example with a DNS " +
			"provider's TXT record resource); the controller then looks the record up and sets `verified`.\n\n" +
			"Creating the resource waits (see `timeouts`) until the token is issued, so the TXT record can be planned " +
			"from it in the same apply. It does not wait for verification, which needs the TXT record first: use the " +
			"`zerotrust_domain_verification` data source with `wait = true` after the record (or in a `check` block).\n\n" +
			"`api_version` selects the API shape: `v1` (status `token`, `verified`, `lastChecked`, `message`) or " +
			"`v1alpha1` (status `token` and one `Verified` condition per domain, of which the one for `domain` is read).\n\n" +
			"**Two flows.** Where users create DomainVerifications, the resource creates the object (only " +
			"`spec.domain`, by server-side apply) and destroy deletes it. In Kuadrant's ingress flow the ingress " +
			"webhook creates the object and only the controller may change it: set `adopt_existing = true` and " +
			"the resource adopts the object for the same domain instead of creating one (the plan shows " +
			"`adopted = true` when it exists already). It then writes nothing to the object, ever, and destroy " +
			"only forgets it: the object stays, with its token and verdict, for the webhook and controller that " +
			"own it. An imported object that another manager created is adopted the same way.",
		Attributes: map[string]schema.Attribute{
			"id":      idAttribute("`<name>` on the default connection, `<cluster>/<name>` otherwise; also the import ID."),
			"cluster": clusterAttribute(),
			"name": schema.StringAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Object name. Defaults to `domain` (a valid domain is a valid object name); with " +
					"`adopt_existing`, to the name of the object found for `domain` at plan, since the ingress webhook " +
					"names objects its own way. Changing it replaces the object.",
				Validators:    []validator.String{validate.K8sName()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIfConfigured(), stringplanmodifier.UseStateForUnknown()},
			},
			"domain": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The domain to verify, such as `apps.example.com`: " + validate.DomainNameRules +
					". The object's `spec.domain` is immutable, so changing it replaces the object (and a new token is issued).",
				Validators:    []validator.String{validate.DomainName()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"api_version": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(domainverification.V1),
				MarkdownDescription: "API version of `kuadrant.dev` DomainVerification to write and read: `v1` " +
					"(default) or `v1alpha1`, whichever the installed controller uses. Changing it updates in place " +
					"(the object is the same; only its representation differs).",
				Validators: []validator.String{stringvalidator.OneOf(domainverification.APIVersions...)},
			},
			"force_conflicts": forceConflictsAttribute(),
			"adopt_existing": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				Default:  booldefault.StaticBool(false),
				MarkdownDescription: "Adopt a DomainVerification for `domain` that another manager (Kuadrant's ingress " +
					"webhook) created, instead of creating one: with `name` unset, the object whose `spec.domain` is " +
					"`domain` (whatever its name), otherwise the object `name`. Nothing is written to an adopted object, " +
					"and destroying the resource leaves it in place. When no such object exists at apply, the resource " +
					"creates it as without this setting. Default `false`: an existing object the provider did not " +
					"create fails the plan (or the apply) with `Object Already Exists`. Matters only at creation; " +
					"changing it later changes nothing.",
			},
			"adopted": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether the object was created by another manager and adopted (`adopt_existing`, " +
					"or an import of such an object): the provider writes nothing to it and destroy does not delete " +
					"it. Known at plan when the object exists then; with `adopt_existing` and no object yet, decided " +
					"at apply.",
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
			},
			"token": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The token the controller issued (`status.token`).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"txt_record_name": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Where to publish the TXT record: the domain itself (without a trailing dot). " +
					"Some DNS providers want the name relative to the zone instead.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"txt_record_value": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The value the TXT record must hold: the token.",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"verified": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "Whether the controller has verified the domain, as last read (v1 " +
					"`status.verified`, or the v1alpha1 `Verified` condition whose `domain` is `domain`; conditions " +
					"about other domains are ignored). Null while the controller has not said. Refreshed on every " +
					"plan; use the data source to wait for it.",
			},
			"last_checked": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "When the controller last looked up the TXT record (RFC 3339; v1 " +
					"`status.lastChecked`, or the v1alpha1 condition's `lastTransitionTime`).",
			},
			"next_verification": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "When the controller checks the TXT record next (RFC 3339; v1 `status.nextCheck`, or " +
					"the v1alpha1 condition's `nextVerification`). Null when the controller does not say.",
			},
			"message": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The controller's message about the last check.",
			},
		},
		Blocks: map[string]schema.Block{"timeouts": timeoutsBlock},
	}
}

// domainVerificationAttrTypes are the types of the schema's top-level
// attributes and blocks, read from the schema once.
// domainVerificationObjectAttrTypes are the attribute types of the object
// attribute at a path (the null timeouts of an imported object), from the schema.
var domainVerificationObjectAttrTypes = schemaTypesOf(func() attr.Type {
	return domainVerificationSchema(context.Background()).Type()
})
