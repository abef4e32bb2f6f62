package resources

import (
	"context"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
)

// NewSpireBundleListResource lists the bundles SPIRE servers hold without a
// federation relationship, for `terraform query` to adopt them.
func NewSpireBundleListResource() list.ListResource {
	return newListShell[spireBundleListConfig](spireBundleType,
		"The bundles each SPIRE server holds of trust domains it has no federation relationship with (set by "+
			"`spire-server bundle set`, by hand or by another tool), on one cluster or all of them, asked through pod "+
			"exec in each cluster's SPIRE server pod (its `spire` settings). Bundles that a relationship refreshes from an endpoint are left "+
			"out: they are not this resource's to manage. SPIRE bundles carry no labels, so `label_selector` is refused.",
		map[string]listschema.Attribute{},
		nil,
	).withLister(func(ctx context.Context, data *providerdata.Data, config spireBundleListConfig, includeResource bool) func(listTarget, listOutput) bool {
		return func(t listTarget, out listOutput) bool {
			if !config.LabelSelector.IsNull() {
				var d diag.Diagnostics
				d.AddAttributeError(path.Root("label_selector"), "Label Selector Not Supported",
					"SPIRE bundles carry no labels; unset label_selector to list them.")
				out.fail(d)
				return false
			}
			cluster := clusterValue(t.key)
			server, d := spireserverattr.ServerFrom(ctx, t.client, data, types.ObjectNull(spireBundleObjectAttrTypes("spire_server")))
			view, err := server.View(ctx)
			if err != nil {
				d.AddError("SPIRE Bundles Not Listed", "Asking the "+server.String()+": "+err.Error())
			}
			if d.HasError() {
				return out.fail(d)
			}
			for _, td := range slices.Sorted(maps.Keys(view.Bundles)) {
				if _, federated := view.Relationships[td]; federated {
					continue
				}
				lo := listedObject{id: objectIdentity{Cluster: t.key, Name: td}, display: resourceID(cluster, td)}
				var diags diag.Diagnostics
				if includeResource {
					state, err := spireBundleStateFromBundle(cluster, view.Bundles[td])
					if err != nil {
						diags.AddWarning("Bundle Not Listed", td+": "+err.Error())
						if !out.send(lo, true, diags) {
							return false
						}
						continue
					}
					lo.state = &state
				}
				if !out.send(lo, false, diags) {
					return false
				}
			}
			return true
		}
	})
}

type spireBundleListConfig struct {
	listScope
}
