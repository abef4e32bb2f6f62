package actions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

var (
	_ action.ActionWithConfigure  = (*spireBundleRefreshAction)(nil)
	_ action.ActionWithModifyPlan = (*spireBundleRefreshAction)(nil)
)

// refreshDefaultTimeout bounds the refresh and the wait for the bundle (the
// timeout attribute's description says "2m").
const refreshDefaultTimeout = 2 * time.Minute

// NewSpireBundleRefreshAction asks a SPIRE server to fetch a federated trust
// domain's bundle now.
func NewSpireBundleRefreshAction() action.Action {
	return &spireBundleRefreshAction{}
}

type spireBundleRefreshAction struct {
	providerdata.ActionBase
}

type spireBundleRefreshActionModel struct {
	Cluster     types.String `tfsdk:"cluster"`
	TrustDomain types.String `tfsdk:"trust_domain"`
	SpireServer types.Object `tfsdk:"spire_server"`
	Timeout     types.String `tfsdk:"timeout"`
}

func (a *spireBundleRefreshAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = typename.SpireBundleRefresh.Under(req.ProviderTypeName)
}

func (a *spireBundleRefreshAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Asks a SPIRE server to fetch a federated trust domain's bundle from the peer's bundle " +
			"endpoint now (`spire-server federation refresh`), instead of at its next scheduled refresh (by default " +
			"every 5 minutes, or as the bundle's refresh hint says), then waits until the server holds the bundle " +
			"(`spire-server bundle list`). Use it after the peer rotated its keys, or right after federating.\n\n" +
			"Both commands run in the SPIRE server pod through pod exec, so the provider's credentials need `get` on " +
			"`pods` and `get` and `create` on `pods/exec` there (see the Least privilege guide). Failures that may pass (the peer's endpoint unreachable, the pod restarting) are " +
			"retried until `timeout`; a SPIRE server without a federation relationship with the trust domain fails " +
			"at once, and so does one whose bundle no longer authenticates the peer's https_spiffe endpoint (the peer's " +
			"CA changed before SPIRE could follow: a forced rotation, a rebuilt peer). No refresh heals that; an apply " +
			"of the `zerotrust_federated_trust_domain` does (`spire_trust = \"bundle_stale\"`).",
		Attributes: map[string]schema.Attribute{
			"cluster": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Key of the provider's `clusters` map naming the cluster of the SPIRE server. " +
					"Unset means the provider's `kubernetes` connection.",
			},
			"trust_domain": schema.StringAttribute{
				Required:            true,
				MarkdownDescription: "The federated trust domain whose bundle to refresh, such as `west.example.org` (no `spiffe://`).",
				Validators:          []validator.String{validate.TrustDomain()},
			},
			"spire_server": spireserverattr.ActionAttribute("The SPIRE server pod the commands run in."),
			"timeout": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "How long to retry the refresh and wait for the bundle, such as `\"5m\"`. Default `\"2m\"`.",
				Validators:          []validator.String{validate.Duration()},
			},
		},
	}
}

// ModifyPlan fails the plan when cluster names no configured cluster.
func (a *spireBundleRefreshAction) ModifyPlan(ctx context.Context, req action.ModifyPlanRequest, resp *action.ModifyPlanResponse) {
	var cluster types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("cluster"), &cluster)...)
	if !resp.Diagnostics.HasError() {
		a.Data.CheckCluster(cluster, path.Root("cluster"), &resp.Diagnostics)
	}
}

func (a *spireBundleRefreshAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var cfg spireBundleRefreshActionModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() || !a.Data.CheckCluster(cfg.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	timeout := providerdata.DurationOr(cfg.Timeout, refreshDefaultTimeout, path.Root("timeout"), &resp.Diagnostics)
	client := a.Data.Client(cfg.Cluster, &resp.Diagnostics)
	server, d := spireserverattr.ServerFrom(ctx, client, a.Data, cfg.SpireServer)
	resp.Diagnostics.Append(d...)
	if resp.Diagnostics.HasError() || client == nil {
		return
	}
	td := cfg.TrustDomain.ValueString()
	progress := newProgress(resp.SendProgress)
	server.OnRetry = progress.retrying

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	progress.send(fmt.Sprintf("Asking %s to refresh the bundle of %q", server, td))
	if err := server.Refresh(ctx, td); err != nil {
		summary, detail := refreshFailure(server, td, timeout, err)
		resp.Diagnostics.AddError(summary, detail)
		return
	}
	progress.send(fmt.Sprintf("SPIRE refreshed the bundle of %q; checking that it holds it", td))
	if err := server.WaitForBundle(ctx, td); err != nil {
		resp.Diagnostics.AddError("SPIRE Does Not Hold the Bundle", fmt.Sprintf("%s refreshed the bundle of %q, but "+
			"`spire-server bundle list` does not show it within %s. Check the SPIRE server's log.\n\n%v", server, td, timeout, err))
		return
	}
	progress.send(fmt.Sprintf("%s holds the bundle of %q", server, td))
}

// refreshFailure explains a failed Refresh: what SPIRE answered is in err.
func refreshFailure(server spireexec.Server, td string, timeout time.Duration, err error) (summary, detail string) {
	switch {
	case spireexec.IsNoRelationship(err):
		return "No Federation Relationship", fmt.Sprintf("%s has no federation relationship with %q, so it has no "+
			"bundle endpoint to refresh from. Federate with the trust domain first (resource "+
			"zerotrust_federated_trust_domain, which spire-controller-manager turns into a relationship), or check "+
			"trust_domain and cluster.\n\n%v", server, td, err)
	case spireexec.IsUnknownAuthority(err):
		return "Peer Bundle No Longer Authenticates the Endpoint", fmt.Sprintf("%s cannot refresh the bundle of %q: "+
			"the peer's bundle endpoint presents a certificate of a CA the bundle SPIRE holds does not contain (the peer's "+
			"CA changed before SPIRE could fetch the new one: a forced rotation, a rebuilt peer). No refresh with that "+
			"bundle succeeds. Apply the zerotrust_federated_trust_domain for it with trust_domain_bundle set to the peer's "+
			"current bundle: its plan shows spire_trust = \"bundle_stale\" and the apply seeds SPIRE with it.\n\n%v", server, td, err)
	case spireexec.IsPermanent(err):
		return "Cannot Run spire-server in the Pod", fmt.Sprintf("Running `spire-server federation refresh` in %s "+
			"failed, and retrying cannot help. Check spire_server (namespace, pod, container) and that the provider's "+
			"credentials may get pods and get and create pods/exec in that namespace.\n\n%v", server, err)
	case errors.Is(err, context.DeadlineExceeded):
		return "Bundle Refresh Timed Out", fmt.Sprintf("%s could not refresh the bundle of %q within %s. Check that "+
			"the peer's bundle endpoint is reachable from the SPIRE server and serves the peer's bundle, and the SPIRE "+
			"server's log; or raise timeout.\n\n%v", server, td, timeout, err)
	default:
		return "Bundle Refresh Failed", fmt.Sprintf("%s could not refresh the bundle of %q.\n\n%v", server, td, err)
	}
}
