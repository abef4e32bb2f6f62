package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

var (
	_ resource.ResourceWithConfigure   = (*spireBundleResource)(nil)
	_ resource.ResourceWithIdentity    = (*spireBundleResource)(nil)
	_ resource.ResourceWithImportState = (*spireBundleResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*spireBundleResource)(nil)
)

// spireBundleType: one peer's bundle in one cluster's SPIRE server, set by
// Terraform instead of fetched from the peer's bundle endpoint. It is no
// Kubernetes object: SPIRE's datastore holds it, and pod exec reads and
// writes it.
var spireBundleType = &typeInfo{
	name: typename.SpireBundle,
	shape: identityShape{key: &identityKey{attribute: "trust_domain",
		description: "Trust domain whose bundle the cluster's SPIRE server holds."}},
	importID: importIDForm{
		key:    spireBundleImportKey,
		format: `"<trust_domain>" (default connection) or "<cluster>/<trust_domain>"`,
		note:   ", e.g. \"east/west.example.org\"",
	},
	planChecks: []string{
		"that SPIRE has no federation relationship with the trust domain",
	},
	whenUnreachable: "keeps the bundles it set in the cluster's SPIRE server last (no update is planned for them), and " +
		"one given a null bundle (from a zerotrust_trust_bundle with on_unreachable = \"warn\" on this cluster) keeps " +
		"the bundle it carried last into its own cluster; the first run that reaches the cluster carries the current ones",
}

// spireBundleImportKey reads the trust domain of an import ID.
func spireBundleImportKey(key string) (objectIdentity, error) {
	td, err := spiffeid.TrustDomainFromString(key)
	if err != nil {
		return objectIdentity{}, fmt.Errorf("%q is not a trust domain: %w", key, err)
	}
	return objectIdentity{Name: td.Name()}, nil
}

// spireBundleTimeout bounds each pod exec that writes or deletes the bundle,
// retries of a restarting pod included.
const spireBundleTimeout = 2 * time.Minute

// NewSpireBundleResource keeps one peer's bundle in one cluster's SPIRE
// server (`spire-server bundle set`), for federation without bundle
// endpoints.
func NewSpireBundleResource() resource.Resource {
	return &spireBundleResource{typeInfo: spireBundleType}
}

type spireBundleResource struct {
	providerdata.ResourceBase
	*typeInfo
}

// server is the SPIRE server pod m names on its cluster; nil after a
// diagnostic.
func (r *spireBundleResource) server(ctx context.Context, m spireBundleResourceModel, read bool, diags *diag.Diagnostics) *spireexec.Server {
	var client *kube.Client
	if read {
		client = r.Data.ReadClient(ctx, m.Cluster, r.object(m.ID), diags)
	} else {
		client = r.Data.Client(m.Cluster, diags)
	}
	if client == nil {
		return nil
	}
	s, d := spireserverattr.ServerFrom(ctx, client, r.Data, m.SpireServer)
	diags.Append(d...)
	if d.HasError() {
		return nil
	}
	return &s
}

func (r *spireBundleResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.write(ctx, req.Plan, &resp.State, resp.Identity, &resp.Diagnostics)
}

func (r *spireBundleResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.write(ctx, req.Plan, &resp.State, resp.Identity, &resp.Diagnostics)
}

// write sets SPIRE's bundle of the trust domain to the planned one. A write
// SPIRE refused changed nothing, so no state is written.
func (r *spireBundleResource) write(ctx context.Context, planned tfsdk.Plan, state *tfsdk.State, identity *tfsdk.ResourceIdentity,
	diags *diag.Diagnostics) {
	var plan spireBundleResourceModel
	diags.Append(planned.Get(ctx, &plan)...)
	if diags.HasError() {
		return
	}
	server := r.server(ctx, plan, false, diags)
	if server == nil {
		return
	}
	td := plan.TrustDomain.ValueString()
	ctx, cancel := context.WithTimeout(ctx, spireBundleTimeout)
	defer cancel()
	if err := server.SetBundle(ctx, td, []byte(plan.Bundle.ValueString())); err != nil {
		diags.AddAttributeError(path.Root("bundle"), "SPIRE Did Not Take the Bundle",
			fmt.Sprintf("`spire-server bundle set` of %q in the %s failed: %s. Nothing was changed.", td, server, execFailure(err)))
		return
	}
	plan.ID = types.StringValue(resourceID(plan.Cluster, td))
	diags.Append(state.Set(ctx, &plan)...)
	diags.Append(spireBundleObjectIdentity(plan).set(ctx, spireBundleType.shape, identity)...)
}

// execFailure is what a failed spire-server command said: SPIRE's own
// answer when it gave one.
func execFailure(err error) string {
	var exit *kube.ExitError
	if errors.As(err, &exit) && strings.TrimSpace(exit.Stderr) != "" {
		return spireexec.OneLine(exit.Stderr)
	}
	return err.Error()
}

// Delete removes the bundle from SPIRE in the on_destroy mode; a bundle
// already gone is no error.
func (r *spireBundleResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state spireBundleResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	server := r.server(ctx, state, false, &resp.Diagnostics)
	if server == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, spireBundleTimeout)
	defer cancel()
	td, mode := state.TrustDomain.ValueString(), state.OnDestroy.ValueString()
	if err := server.RemoveBundle(ctx, td, mode); err != nil {
		detail := fmt.Sprintf("Deleting the bundle of %q from the %s (mode %s) failed: %v.", td, server, mode, err)
		if mode == spireexec.BundleDeleteRestrict {
			detail += " With on_destroy = \"restrict\" SPIRE refuses while registration entries federate with the " +
				"trust domain: remove the trust domain from their federates_with first (destroy the ClusterSPIFFEIDs " +
				"or their federation), or set on_destroy = \"dissociate\"."
		}
		resp.Diagnostics.AddError("Bundle Not Deleted From SPIRE", detail)
	}
}

func (r *spireBundleResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	id, ok := r.importTarget(ctx, r.Data, req, &resp.Diagnostics)
	if !ok {
		return
	}
	cluster := clusterValue(id.Cluster)
	m := spireBundleResourceModel{Cluster: cluster, SpireServer: types.ObjectNull(spireBundleObjectAttrTypes("spire_server"))}
	server := r.server(ctx, m, false, &resp.Diagnostics)
	if server == nil {
		return
	}
	view, err := server.View(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Cannot Import the Bundle", fmt.Sprintf("Asking the %s: %v.", server, err))
		return
	}
	held := view.Bundles[id.Name]
	if held == nil {
		resp.Diagnostics.AddError("Cannot Import the Bundle", fmt.Sprintf("The %s holds no bundle of %q.", server, id.Name))
		return
	}
	state, err := spireBundleStateFromBundle(cluster, held)
	if err != nil {
		resp.Diagnostics.AddError("Cannot Import the Bundle", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
	resp.Diagnostics.Append(id.set(ctx, spireBundleType.shape, resp.Identity)...)
}
