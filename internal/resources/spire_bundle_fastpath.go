package resources

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// spireBundleFast serves zerotrust_spire_bundle, which a configuration
// holds by the hundred (one per peer per cluster where the SPIRE servers do
// not reach each other), through internal/fastpath: its Read and
// ModifyPlan, and NewSpireBundleFastPath. The hooks below are its own part;
// a refresh still asks SPIRE (spireViewOf, once per server and walk), the
// fast path skips only the framework's work around it.
var spireBundleFast = sync.OnceValue(func() *fastpath.For[spireBundleResourceModel] {
	return fastpath.New[spireBundleResourceModel](context.Background(), spireBundleSchema(), spireBundleType.shape.schema())
})

// NewSpireBundleFastPath answers from the provider data data returns (nil
// while the provider is not configured or defers).
func NewSpireBundleFastPath(data func() *providerdata.Data) fastpath.Resource {
	return servedFast(spireBundleFast(), data, func(d *providerdata.Data) fastpath.Hooks[spireBundleResourceModel] {
		r := &spireBundleResource{typeInfo: spireBundleType}
		r.Data = d
		return r.hooks()
	}, NewSpireBundleResource)
}

// hooks is r as its fastpath.Hooks, nil until the provider is configured.
func (r *spireBundleResource) hooks() fastpath.Hooks[spireBundleResourceModel] {
	if r.Data == nil {
		return nil
	}
	return r
}

func (r *spireBundleResource) Identity(ctx context.Context, m spireBundleResourceModel, typ tftypes.Type) (tftypes.Value, error) {
	return spireBundleObjectIdentity(m).terraformValue(ctx, spireBundleType.shape, typ)
}

func (r *spireBundleResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	spireBundleFast().Read(ctx, r, req, resp)
}

// Refresh is Read's work: what SPIRE holds of the trust domain becomes the
// bundle (setSpireBundleFromView). It never reports the bundle gone (SPIRE
// losing it plans setting it again). A cluster that does not answer keeps
// the state: the courier goes on between the clusters that do
// (whenUnreachable). What it says once per cluster (the cluster does not
// answer, SPIRE cannot be asked) it leaves to the framework's Read when
// fast.
func (r *spireBundleResource) Refresh(ctx context.Context, state *spireBundleResourceModel, fast bool) (fastpath.Refresh, diag.Diagnostics) {
	var diags diag.Diagnostics
	server := r.server(ctx, *state, true, &diags)
	if server == nil {
		return fastpath.Refresh{}, diags
	}
	if fast && server.Client.Reachable(ctx) != nil {
		return fastpath.Refresh{}, nil
	}
	if !r.Data.Answers(ctx, server.Client, &diags) {
		return fastpath.Refresh{}, diags
	}
	view, err := spireViewOf(ctx, server.Client, *server)
	if err != nil {
		// The bundle may well be in place; the state keeps what was set.
		if !fast && walkOf(server.Client).bundlesNotRead.first(server.Key()) {
			diags.AddWarning("SPIRE Bundles Not Read",
				fmt.Sprintf("Cannot ask the %s which bundles it holds, so the plan cannot show a bundle SPIRE lost or "+
					"someone replaced: every zerotrust_spire_bundle of the cluster keeps its prior state. Allow `get` on "+
					"`pods` and `get` and `create` on `pods/exec` in its namespace for the provider's credentials, or "+
					"point spire_server at the SPIRE server pod.\n\n%v", server, err))
		}
		return fastpath.Refresh{}, diags
	}
	setSpireBundleFromView(state, view)
	return fastpath.Refresh{Found: true}, diags
}
