package datasources

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func domainVerificationDataSourceSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "Reads a Kuadrant `DomainVerification` and asks every authoritative DNS server of the " +
			"domain's zone, directly, whether it serves the token as a TXT record at the domain. No caching " +
			"resolver is in the way, so a record that was just published is seen at once, and a server that has " +
			"not caught up yet is named.\n\n" +
			"With `wait = true` it polls until every server serves the token and, when the controller reports a " +
			"verdict, until the domain is verified; after `timeout` it fails with each server's answer. Put it " +
			"after the TXT record in the graph (`depends_on`), or inside a `check` block for continuous validation " +
			"(there a failure is a warning).\n\n" +
			"It only reads, so it suits Kuadrant's ingress flow, where the ingress webhook creates the object and " +
			"only the controller may change it. A subdomain of a verified domain is verified without a check of its " +
			"own: `covered_by` names the parent.\n\n" +
			"The zone's servers are found by asking a recursive resolver for the zone's SOA and NS records (the " +
			"provider's `dns.resolver`, or the first `nameserver` of `/etc/resolv.conf`); `nameservers` skips that. " +
			"Queries go over UDP, again over TCP when an answer is truncated, follow CNAMEs (at most 8), and are " +
			"retried with backoff after timeouts and SERVFAIL.\n\n" +
			"When the cluster does not answer at all and its `on_unreachable` is `warn` (the provider's default), " +
			"the read is skipped with a warning naming the cluster: every attribute it reads is null, the arguments " +
			"keep their values. With `error`, the read fails at once naming the cluster.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "`<name>` on the default connection, `<cluster>/<name>` otherwise.",
			},
			"cluster": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Key of the provider's `clusters` map naming the cluster to read from. Unset means " +
					"the provider's `kubernetes` connection.",
			},
			"name": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: "Object name. Defaults to `domain`, as in the `zerotrust_domain_verification` resource.",
				Validators:          []validator.String{validate.K8sName()},
			},
			"domain": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The domain being verified: " + validate.DomainNameRules + ".",
				Validators:          []validator.String{validate.DomainName()},
			},
			"api_version": schema.StringAttribute{
				Optional:            true,
				Computed:            true,
				MarkdownDescription: "API version to read the object in: `v1` (default) or `v1alpha1`.",
				Validators:          []validator.String{stringvalidator.OneOf(domainverification.APIVersions...)},
			},
			"nameservers": schema.ListAttribute{
				Optional:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Authoritative servers to ask instead of the zone's discovered ones, as " +
					"`host:port` (or a host alone for port 53). CNAME targets are asked of the same servers.",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(validate.NameserverAddress()),
				},
			},
			"wait": schema.BoolAttribute{
				Optional: true,
				MarkdownDescription: "Poll until every server serves the token (and, when the controller reports " +
					"a verdict, until `verified` is true); fail after `timeout`. Default `false`: read once.",
			},
			"timeout": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "How long `wait` polls, such as `\"10m\"`. Default `\"5m\"`.",
				Validators:          []validator.String{validate.Duration()},
			},
			"poll_interval": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Pause between polls with `wait`, such as `\"10s\"`. Default `\"5s\"`.",
				Validators:          []validator.String{validate.Duration()},
			},
			"token": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The controller's token (`status.token`); null until issued.",
			},
			"txt_record_name": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Where the TXT record must be: the domain itself.",
			},
			"txt_record_value": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "What the TXT record must hold: the token.",
			},
			"verified": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "The controller's verdict (v1 `status.verified`, or the v1alpha1 `Verified` " +
					"condition whose `domain` is `domain`; conditions about other domains are ignored); null when " +
					"it has given none. `true` also when `covered_by` names a verified parent domain.",
			},
			"covered_by": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "The verified parent domain that covers `domain`, such as `example.com` for " +
					"`apps.example.com`: a subdomain of a verified domain needs no verification of its own (Kuadrant's " +
					"custom domain design), so `verified` is `true` and `wait` needs no TXT record. The nearest such " +
					"parent among the cluster's DomainVerifications (read as `v1`); null when none covers it. A covered " +
					"domain needs no DomainVerification object; without one, `token` is null and no DNS server is asked.",
			},
			"next_verification": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "When the controller checks the TXT record next (RFC 3339; v1 `status.nextCheck`, " +
					"or the v1alpha1 condition's `nextVerification`); null when it does not say.",
			},
			"last_checked": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "When the controller last checked (RFC 3339).",
			},
			"message": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The controller's message about the last check.",
			},
			"zone": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The zone whose servers were asked; null when `nameservers` is set.",
			},
			"present": schema.BoolAttribute{
				Computed:            true,
				MarkdownDescription: "Whether every server serves the token as a TXT record at the domain (`false` when no server was asked).",
			},
			"servers": schema.ListNestedAttribute{
				Computed: true,
				MarkdownDescription: "One entry per authoritative server address, in a stable order; empty when none " +
					"was asked (a covered domain without an object, or one whose servers could not be found).",
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"server": schema.StringAttribute{
							Computed:            true,
							MarkdownDescription: "The address asked, `host:port`.",
						},
						"name": schema.StringAttribute{
							Computed:            true,
							MarkdownDescription: "The server's NS host name; null for a server from `nameservers`.",
						},
						"present": schema.BoolAttribute{
							Computed:            true,
							MarkdownDescription: "Whether this server serves the token.",
						},
						"status": schema.StringAttribute{
							Computed: true,
							MarkdownDescription: "`answer` (TXT records found), `nxdomain` (the name does not exist), " +
								"`nodata` (the name exists without TXT records) or `error`.",
						},
						"values": schema.ListAttribute{
							Computed:            true,
							ElementType:         types.StringType,
							MarkdownDescription: "The TXT records served, each with its strings joined.",
						},
						"cnames": schema.ListAttribute{
							Computed:            true,
							ElementType:         types.StringType,
							MarkdownDescription: "The CNAME chain followed from the domain, each target in order.",
						},
						"answer": schema.StringAttribute{
							Computed:            true,
							MarkdownDescription: "The answer in words, as in error messages.",
						},
						"error": schema.StringAttribute{
							Computed:            true,
							MarkdownDescription: "Why the server could not be asked (status `error`); null otherwise.",
						},
					},
				},
			},
		},
	}
}
