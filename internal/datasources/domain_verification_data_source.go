package datasources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8swait "k8s.io/apimachinery/pkg/util/wait"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/dnscheck"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

var _ datasource.DataSourceWithConfigure = (*domainVerificationDataSource)(nil)

const (
	dvDefaultTimeout = 5 * time.Minute
	dvDefaultPoll    = 5 * time.Second
)

// errDVStop ends the polling after a diagnostic was added.
var errDVStop = errors.New("stopped with a diagnostic")

// NewDomainVerificationDataSource reads a DomainVerification and asks every
// authoritative DNS server for its TXT record.
func NewDomainVerificationDataSource() datasource.DataSource {
	return &domainVerificationDataSource{}
}

type domainVerificationDataSource struct {
	providerdata.DataSourceBase
}

type domainVerificationDataSourceModel struct {
	ID               types.String `tfsdk:"id"`
	Cluster          types.String `tfsdk:"cluster"`
	Name             types.String `tfsdk:"name"`
	Domain           types.String `tfsdk:"domain"`
	APIVersion       types.String `tfsdk:"api_version"`
	Nameservers      types.List   `tfsdk:"nameservers"`
	Wait             types.Bool   `tfsdk:"wait"`
	Timeout          types.String `tfsdk:"timeout"`
	PollInterval     types.String `tfsdk:"poll_interval"`
	Token            types.String `tfsdk:"token"`
	TXTRecordName    types.String `tfsdk:"txt_record_name"`
	TXTRecordValue   types.String `tfsdk:"txt_record_value"`
	Verified         types.Bool   `tfsdk:"verified"`
	LastChecked      types.String `tfsdk:"last_checked"`
	NextVerification types.String `tfsdk:"next_verification"`
	CoveredBy        types.String `tfsdk:"covered_by"`
	Message          types.String `tfsdk:"message"`
	Zone             types.String `tfsdk:"zone"`
	Present          types.Bool   `tfsdk:"present"`
	Servers          types.List   `tfsdk:"servers"`
}

// dvServerModel is one element of `servers`.
type dvServerModel struct {
	Server  types.String `tfsdk:"server"`
	Name    types.String `tfsdk:"name"`
	Present types.Bool   `tfsdk:"present"`
	Status  types.String `tfsdk:"status"`
	Values  types.List   `tfsdk:"values"`
	CNAMEs  types.List   `tfsdk:"cnames"`
	Answer  types.String `tfsdk:"answer"`
	Error   types.String `tfsdk:"error"`
}

// dvServerType is the element type of `servers`, read from the schema once so
// that it cannot drift from it.
var dvServerType = sync.OnceValue(func() attr.Type {
	t, ok := domainVerificationDataSourceSchema().Attributes["servers"].GetType().(attr.TypeWithElementType)
	if !ok {
		panic("domain_verification data source: servers is not a list")
	}
	return t.ElementType()
})

func (d *domainVerificationDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = typename.DomainVerification.Under(req.ProviderTypeName)
}

func (d *domainVerificationDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = domainVerificationDataSourceSchema()
}

// dvObservation is one look at the object and the DNS servers.
type dvObservation struct {
	obj    *unstructured.Unstructured
	objErr error
	status domainverification.Status
	dns    *dnscheck.Result
	dnsErr error
	// coveredBy is the verified parent domain covering the domain, "" when none.
	coveredBy string
	// coverErr is why the parent domains could not be looked at (the list
	// of DomainVerifications failed), nil when they were.
	coverErr error
	complete bool
}

func (d *domainVerificationDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var cfg domainVerificationDataSourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !d.Data.CheckCluster(cfg.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	timeout := providerdata.DurationOr(cfg.Timeout, dvDefaultTimeout, path.Root("timeout"), &resp.Diagnostics)
	poll := providerdata.DurationOr(cfg.PollInterval, dvDefaultPoll, path.Root("poll_interval"), &resp.Diagnostics)
	var nameservers []string
	if !cfg.Nameservers.IsNull() {
		resp.Diagnostics.Append(cfg.Nameservers.ElementsAs(ctx, &nameservers, false)...)
	}
	client := d.Data.Client(cfg.Cluster, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || client == nil {
		return
	}
	if d.Data.SkipsRead(ctx, client, typename.DomainVerification.Full(), &resp.Diagnostics) {
		resp.Diagnostics.Append(resp.State.Set(ctx, &cfg)...)
		return
	}
	domain := cfg.Domain.ValueString()
	name := domainverification.DefaultName(domain)
	if !cfg.Name.IsNull() {
		name = cfg.Name.ValueString()
	}
	apiVersion := domainverification.V1
	if !cfg.APIVersion.IsNull() {
		apiVersion = cfg.APIVersion.ValueString()
	}
	kind := domainverification.Kind(apiVersion)
	checker := dnscheck.New(dnscheck.Options{Resolver: d.Data.DNSResolver, Timeout: d.Data.DNSTimeout, Nameservers: nameservers})
	wait := cfg.Wait.ValueBool()

	var o dvObservation
	// look is one observation; it returns errDVStop once it has added a
	// diagnostic. While waiting, a missing object may still be on its way,
	// and a request that failed because the wait ran out (the poll can fire
	// at the deadline itself) is the timeout, reported with the last look.
	look := func(ctx context.Context) (bool, error) {
		seen := d.observe(ctx, client, kind, name, domain, checker)
		if seen.objErr != nil && wait && pastDeadline(ctx) {
			return false, context.DeadlineExceeded
		}
		o = seen
		// A missing object is no error while waiting (it may be on its
		// way), nor for a covered domain, which needs none.
		switch {
		case o.objErr != nil && !kube.IsNotFound(o.objErr):
			resp.Diagnostics.Append(kube.Diagnostic(o.objErr, "read the DomainVerification "+name))
			return false, errDVStop
		case o.objErr != nil && !wait && o.coveredBy == "":
			resp.Diagnostics.AddAttributeError(path.Root("domain"), "DomainVerification Not Found", fmt.Sprintf(
				"DomainVerification %q does not exist on cluster %q, and no verified parent domain covers %q. "+
					"Create it (resource zerotrust_domain_verification; in Kuadrant's ingress flow the webhook "+
					"creates it for an Ingress using the domain), set name to the object for %q, or set wait = true "+
					"when it is created in the same apply.\n\n%v", name, client.DisplayName(), domain, domain, o.objErr))
			return false, errDVStop
		}
		if o.obj != nil && domainverification.Domain(o.obj) != domain {
			resp.Diagnostics.AddAttributeError(path.Root("domain"), "Domain Mismatch",
				fmt.Sprintf("DomainVerification %q on cluster %q verifies %q, not %q. Set name to the object for %q.",
					name, client.DisplayName(), domainverification.Domain(o.obj), domain, domain))
			return false, errDVStop
		}
		return !wait || o.complete, nil
	}
	var err error
	if wait {
		err = k8swait.PollUntilContextTimeout(ctx, poll, timeout, true, look)
	} else {
		_, err = look(ctx)
	}
	switch {
	case errors.Is(err, errDVStop):
		return
	case err != nil && ctx.Err() != nil:
		resp.Diagnostics.AddError("Domain Verification Read Interrupted", ctx.Err().Error())
		return
	case err != nil:
		resp.Diagnostics.AddError("Timed Out Waiting For Domain Verification",
			dvTimeoutDetail(domain, name, client.DisplayName(), timeout, o))
		return
	}
	if o.dnsErr != nil && o.coveredBy == "" {
		resp.Diagnostics.AddError("Cannot Find Authoritative DNS Servers",
			fmt.Sprintf("Looking up the TXT record %s failed: %v.\n\nSet nameservers to the zone's authoritative "+
				"servers, or the provider's dns.resolver to a recursive resolver that can reach them.", domain, o.dnsErr))
		return
	}
	if o.dns == nil {
		o.dns = &dnscheck.Result{} // no server was asked
	}
	if d, ok := kube.NotCheckedWarning(o.coverErr, "whether a verified parent domain covers "+domain+" (covered_by stays null)"); ok {
		resp.Diagnostics.Append(d)
	}

	state := cfg
	state.ID = types.StringValue(providerdata.ResourceID(cfg.Cluster, name))
	state.Name = types.StringValue(name)
	state.APIVersion = types.StringValue(apiVersion)
	state.TXTRecordName = types.StringValue(domain)
	state.Token = providerdata.OptionalString(o.status.Token)
	state.TXTRecordValue = state.Token
	state.Verified = types.BoolPointerValue(o.status.Verified)
	state.CoveredBy = providerdata.OptionalString(o.coveredBy)
	if o.coveredBy != "" {
		state.Verified = types.BoolValue(true)
	}
	state.LastChecked = providerdata.OptionalString(o.status.LastChecked)
	state.NextVerification = providerdata.OptionalString(o.status.NextCheck)
	state.Message = providerdata.OptionalString(o.status.Message)
	state.Zone = providerdata.OptionalString(o.dns.Zone)
	state.Present = types.BoolValue(o.status.Token != "" && o.dns.AllHave(o.status.Token))
	servers, diags := dvServersValue(o.dns, o.status.Token)
	resp.Diagnostics.Append(diags...)
	state.Servers = servers
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// observe reads the object and whether a verified parent domain covers
// domain, then asks the DNS servers (also before a token exists, so that
// what they serve is reported either way). A covered domain without an
// object of its own is complete without DNS.
func (d *domainVerificationDataSource) observe(ctx context.Context, client *kube.Client, kind kube.Kind, name, domain string,
	checker *dnscheck.Checker) dvObservation {
	var o dvObservation
	o.obj, o.objErr = client.Get(ctx, kind, "", name)
	if o.objErr != nil && !kube.IsNotFound(o.objErr) {
		o.obj = nil
		return o
	}
	// Read as v1, the storage version, which keeps both status shapes. A
	// cluster that refuses the list (credentials that may only get) covers
	// nothing.
	if items, err := client.List(ctx, kube.DomainVerificationV1, ""); err == nil {
		o.coveredBy, _ = domainverification.CoveredBy(items, domain)
	} else {
		o.coverErr = err
	}
	if o.objErr != nil {
		o.obj = nil
		o.complete = o.coveredBy != ""
		return o
	}
	o.status = domainverification.StatusOf(o.obj)
	o.dns, o.dnsErr = checker.LookupTXT(ctx, domain)
	verdictOK := o.status.Verified == nil || *o.status.Verified
	o.complete = o.coveredBy != "" ||
		o.dnsErr == nil && o.status.Token != "" && o.dns.AllHave(o.status.Token) && verdictOK
	return o
}

// pastDeadline reports whether ctx has ended or its deadline has passed
// (client-go's rate limiter refuses a request before ctx says so).
func pastDeadline(ctx context.Context) bool {
	deadline, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(deadline)
}

// dvTimeoutDetail says what was last seen: the object's status and each
// server's answer.
func dvTimeoutDetail(domain, name, cluster string, timeout time.Duration, o dvObservation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Domain verification of %q did not complete within %s.\n\n", domain, timeout)
	switch {
	case o.obj == nil:
		fmt.Fprintf(&b, "DomainVerification %q does not exist on cluster %q (%v), and no verified parent domain "+
			"covers %q. Create it (resource zerotrust_domain_verification) before this data source reads it.\n",
			name, cluster, o.objErr, domain)
		return b.String()
	case o.status.Token == "":
		fmt.Fprintf(&b, "DomainVerification %q on cluster %q has no token yet: is its controller running?\n", name, cluster)
	default:
		fmt.Fprintf(&b, "The TXT record %s must hold the token %q on every authoritative server.\n", domain, o.status.Token)
	}
	switch {
	case o.dnsErr != nil:
		fmt.Fprintf(&b, "The DNS servers could not be asked: %v\n", o.dnsErr)
	case o.dns != nil:
		missing := 0
		for _, s := range o.dns.Servers {
			if o.status.Token == "" || !s.Has(o.status.Token) {
				missing++
			}
		}
		fmt.Fprintf(&b, "Answers (%d of %d servers without the token):\n%s\n", missing, len(o.dns.Servers), o.dns.Describe("  - "))
	}
	if v := o.status.Verified; v != nil {
		fmt.Fprintf(&b, "\nThe controller reports verified = %t", *v)
		if o.status.Message != "" {
			fmt.Fprintf(&b, ": %s", o.status.Message)
		}
		if o.status.LastChecked != "" {
			fmt.Fprintf(&b, " (last checked %s)", o.status.LastChecked)
		}
		b.WriteString(".\n")
	}
	b.WriteString("\nPublish the TXT record on every authoritative server (a secondary may lag behind its primary), " +
		"or raise timeout.")
	return b.String()
}

func dvServersValue(res *dnscheck.Result, token string) (types.List, diag.Diagnostics) {
	ctx := context.Background()
	var diags diag.Diagnostics
	servers := make([]dvServerModel, 0, len(res.Servers))
	for _, s := range res.Servers {
		values, d := types.ListValueFrom(ctx, types.StringType, dvNonNil(s.Values))
		diags.Append(d...)
		cnames := make([]string, len(s.CNAMEs))
		for i, c := range s.CNAMEs {
			cnames[i] = strings.TrimSuffix(c, ".")
		}
		cnameList, d := types.ListValueFrom(ctx, types.StringType, cnames)
		diags.Append(d...)
		errText := types.StringNull()
		if s.Err != nil {
			errText = types.StringValue(s.Err.Error())
		}
		servers = append(servers, dvServerModel{
			Server:  types.StringValue(s.Server.Addr),
			Name:    providerdata.OptionalString(strings.TrimSuffix(s.Server.Name, ".")),
			Present: types.BoolValue(token != "" && s.Has(token)),
			Status:  types.StringValue(string(s.Status)),
			Values:  values,
			CNAMEs:  cnameList,
			Answer:  types.StringValue(s.Answer()),
			Error:   errText,
		})
	}
	list, d := types.ListValueFrom(ctx, dvServerType(), servers)
	diags.Append(d...)
	return list, diags
}

func dvNonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
