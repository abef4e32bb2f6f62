package actions

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/actionvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/dnscheck"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

var (
	_ action.ActionWithConfigure        = (*domainVerificationCheckAction)(nil)
	_ action.ActionWithConfigValidators = (*domainVerificationCheckAction)(nil)
	_ action.ActionWithModifyPlan       = (*domainVerificationCheckAction)(nil)
)

// NewDomainVerificationCheckAction asks every authoritative DNS server of a
// domain whether it serves a domain verification token now.
func NewDomainVerificationCheckAction() action.Action {
	return &domainVerificationCheckAction{}
}

type domainVerificationCheckAction struct {
	providerdata.ActionBase
}

type domainVerificationCheckActionModel struct {
	Cluster     types.String `tfsdk:"cluster"`
	Name        types.String `tfsdk:"name"`
	APIVersion  types.String `tfsdk:"api_version"`
	Domain      types.String `tfsdk:"domain"`
	Token       types.String `tfsdk:"token"`
	Nameservers types.List   `tfsdk:"nameservers"`
}

func (a *domainVerificationCheckAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = typename.DomainVerificationCheck.Under(req.ProviderTypeName)
}

func (a *domainVerificationCheckAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Asks every authoritative DNS server of a domain's zone, directly and once, whether it " +
			"serves a domain verification token as a TXT record at the domain, and fails listing what each server " +
			"answered unless all do. On success it reports one line per server.\n\n" +
			"The token is the one a Kuadrant `DomainVerification` issued (`name`, read from the object's status), " +
			"or one given with `domain` and `token`. Servers are found, queried and retried as in the " +
			"`zerotrust_domain_verification` data source, which waits instead of checking once.",
		Attributes: map[string]schema.Attribute{
			"cluster": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Key of the provider's `clusters` map naming the cluster of the DomainVerification " +
					"(`name`). Unset means the provider's `kubernetes` connection.",
			},
			"name": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Name of the DomainVerification whose token (`status.token`) and domain " +
					"(`spec.domain`) to check. Exactly one of `name` and `token` is set.",
				Validators: []validator.String{validate.K8sName()},
			},
			"api_version": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "API version to read the DomainVerification in: `v1` (default) or `v1alpha1`.",
				Validators: []validator.String{
					stringvalidator.OneOf(domainverification.APIVersions...),
					stringvalidator.AlsoRequires(path.MatchRoot("name")),
				},
			},
			"domain": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "The domain whose TXT record to check: " + validate.DomainNameRules + ". Required " +
					"with `token`; with `name`, it must be the object's domain.",
				Validators: []validator.String{validate.DomainName()},
			},
			"token": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "The TXT value every server must serve at `domain`, when no DomainVerification is read.",
				Validators: []validator.String{
					stringvalidator.LengthAtLeast(1),
					stringvalidator.AlsoRequires(path.MatchRoot("domain")),
					stringvalidator.ConflictsWith(path.MatchRoot("cluster")),
				},
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
		},
	}
}

func (a *domainVerificationCheckAction) ConfigValidators(context.Context) []action.ConfigValidator {
	return []action.ConfigValidator{
		actionvalidator.ExactlyOneOf(path.MatchRoot("name"), path.MatchRoot("token")),
	}
}

// ModifyPlan fails the plan when cluster names no configured cluster.
func (a *domainVerificationCheckAction) ModifyPlan(ctx context.Context, req action.ModifyPlanRequest, resp *action.ModifyPlanResponse) {
	var cluster types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("cluster"), &cluster)...)
	if !resp.Diagnostics.HasError() {
		a.Data.CheckCluster(cluster, path.Root("cluster"), &resp.Diagnostics)
	}
}

func (a *domainVerificationCheckAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var cfg domainVerificationCheckActionModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var nameservers []string
	if !cfg.Nameservers.IsNull() {
		resp.Diagnostics.Append(cfg.Nameservers.ElementsAs(ctx, &nameservers, false)...)
	}
	domain, token := cfg.Domain.ValueString(), cfg.Token.ValueString()
	tokenSource := "the configured token"
	if !cfg.Name.IsNull() {
		domain, token, tokenSource = a.readDomainVerification(ctx, cfg, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	progress := newProgress(resp.SendProgress)
	progress.send(fmt.Sprintf("Asking the authoritative DNS servers of %s for its TXT records", domain))
	checker := dnscheck.New(dnscheck.Options{Resolver: a.Data.DNSResolver, Timeout: a.Data.DNSTimeout, Nameservers: nameservers})
	res, err := checker.LookupTXT(ctx, domain)
	if err != nil {
		resp.Diagnostics.AddError("Cannot Find Authoritative DNS Servers",
			fmt.Sprintf("Looking up the TXT record %s failed: %v.\n\nSet nameservers to the zone's authoritative "+
				"servers, or the provider's dns.resolver to a recursive resolver that can reach them.", domain, err))
		return
	}
	for _, s := range res.Servers {
		progress.send(serverLine(s, token))
	}
	if !res.AllHave(token) {
		resp.Diagnostics.AddError("TXT Record Not Served", notServedDetail(res, token, tokenSource))
	}
}

// readDomainVerification returns the domain and token of the DomainVerification
// the config names, and says where the token came from.
func (a *domainVerificationCheckAction) readDomainVerification(ctx context.Context, cfg domainVerificationCheckActionModel,
	diags *diag.Diagnostics) (domain, token, source string) {
	if !a.Data.CheckCluster(cfg.Cluster, path.Root("cluster"), diags) {
		return "", "", ""
	}
	client := a.Data.Client(cfg.Cluster, diags)
	if client == nil {
		return "", "", ""
	}
	name := cfg.Name.ValueString()
	obj, err := client.Get(ctx, domainverification.Kind(cfg.APIVersion.ValueString()), "", name)
	if err != nil {
		diags.Append(kube.Diagnostic(err, "read the DomainVerification "+name))
		return "", "", ""
	}
	domain = domainverification.Domain(obj)
	if want := cfg.Domain.ValueString(); want != "" && want != domain {
		diags.AddAttributeError(path.Root("domain"), "Domain Mismatch",
			fmt.Sprintf("DomainVerification %q on cluster %q verifies %q, not %q. Set name to the object for %q.",
				name, client.DisplayName(), domain, want, want))
		return "", "", ""
	}
	token = domainverification.StatusOf(obj).Token
	if token == "" {
		diags.AddError("No Verification Token Yet", fmt.Sprintf("DomainVerification %q on cluster %q has no token "+
			"yet (status.token), so there is nothing to look for in DNS: is its controller running?", name, client.DisplayName()))
		return "", "", ""
	}
	return domain, token, fmt.Sprintf("the token of DomainVerification %q on cluster %q", name, client.DisplayName())
}

// serverLine is one server's progress line.
func serverLine(s dnscheck.ServerResult, token string) string {
	if s.Has(token) {
		return fmt.Sprintf("%s serves the token", s.Server)
	}
	return fmt.Sprintf("%s does not serve the token: %s", s.Server, s.Answer())
}

// notServedDetail lists every server's answer.
func notServedDetail(res *dnscheck.Result, token, tokenSource string) string {
	missing := 0
	for _, s := range res.Servers {
		if !s.Has(token) {
			missing++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The TXT record %s must hold %s, %q, on every authoritative server", res.Name, tokenSource, token)
	if res.Zone != "" {
		fmt.Fprintf(&b, " of the zone %s", res.Zone)
	}
	fmt.Fprintf(&b, ". %d of %d servers do not serve it. Answers:\n%s\n\n", missing, len(res.Servers), res.Describe("  - "))
	b.WriteString("Publish the TXT record on every authoritative server (a secondary may lag behind its primary), " +
		"then check again.")
	return b.String()
}
