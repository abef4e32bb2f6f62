// Package providerdata holds what the configured provider hands to its
// resources and data sources, and the base types that receive it. It is a
// leaf so that resources need not import the provider package.
package providerdata

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// Data is the configured provider.
type Data struct {
	Clusters *kube.Clusters
	// Spire is the provider's `spire` resolved, ClusterSpire each cluster's
	// own `spire` by key where one is set (see SpireOf).
	Spire        Spire
	ClusterSpire map[string]Spire
	// MaxFederatedTrustDomains bounds federates_with of zerotrust_spire_federation.
	MaxFederatedTrustDomains int
	// DNSResolver is a host:port, or "" for the first nameserver of /etc/resolv.conf.
	DNSResolver string
	DNSTimeout  time.Duration
	// UnreachableNotes lists, one "  - " line each, what the plan skips or
	// does instead on a cluster that does not answer (see Answers); the
	// provider fills it from the resources' descriptors.
	UnreachableNotes string
	// OnUnreachable is each cluster's own on_unreachable by key ("" when
	// unset), OnUnreachableDefault the provider's (see WarnsUnreachable).
	OnUnreachable        map[string]string
	OnUnreachableDefault string
	// Published holds the published bundles' URLs read in this run; nil
	// outside a configured provider.
	Published *PublishedURLs
}

// The values of on_unreachable, the words zerotrust_trust_bundle's
// attribute of the same name uses too.
const (
	OnUnreachableError = "error"
	OnUnreachableWarn  = "warn"
)

// WarnsUnreachable reports whether a run goes on, with warnings, past the
// cluster of client when it does not answer at all: its own on_unreachable,
// else the provider's, else "warn".
func (d *Data) WarnsUnreachable(client *kube.Client) bool {
	if d == nil || client == nil {
		return false
	}
	if v := d.OnUnreachable[client.Name]; v != "" {
		return v == OnUnreachableWarn
	}
	return d.OnUnreachableDefault != OnUnreachableError
}

// ClusterKey turns a `cluster` attribute into a registry key.
func ClusterKey(v types.String) string {
	if v.IsNull() || v.IsUnknown() {
		return kube.DefaultKey
	}
	return v.ValueString()
}

// CheckCluster adds an attribute error when the `cluster` value names no
// configured cluster. Unknown values pass: they are checked at apply.
func (d *Data) CheckCluster(v types.String, p path.Path, diags *diag.Diagnostics) bool {
	if d == nil || v.IsUnknown() || v.IsNull() {
		return true
	}
	if !d.Clusters.Known(v.ValueString()) {
		diags.AddAttributeError(p, "Unknown Cluster", d.Clusters.UnknownKeyError(v.ValueString()))
		return false
	}
	return true
}

// Client returns the client for a `cluster` value, with a diagnostic on failure.
func (d *Data) Client(v types.String, diags *diag.Diagnostics) *kube.Client {
	c, err := d.Clusters.Client(ClusterKey(v))
	if err != nil {
		diags.AddAttributeError(path.Root("cluster"), "Cluster Connection Unavailable",
			fmt.Sprintf("Cannot connect to the cluster: %v", err))
		return nil
	}
	return c
}

// ReadClient is Client for the Read of object (see KeepsState): it returns
// nil, so that Read keeps what state says, while the cluster's connection is
// unknown (a cluster created in the same apply has none during plan) and
// while the cluster does not answer and its on_unreachable is "warn"
// (KeepsState).
func (d *Data) ReadClient(ctx context.Context, v types.String, object string, diags *diag.Diagnostics) *kube.Client {
	if d.Clusters.IsUnknown(ClusterKey(v)) {
		return nil
	}
	client := d.Client(v, diags)
	if client == nil || d.KeepsState(ctx, client, object, diags) {
		return nil
	}
	return client
}

// ResourceBase is embedded by every resource; its Configure checks the type
// of the provider data once, so resources can use Data without assertions.
type ResourceBase struct {
	Data *Data
}

// Configure implements resource.ResourceWithConfigure.
func (b *ResourceBase) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	b.Data = configure(req.ProviderData, &resp.Diagnostics)
}

// DataSourceBase is embedded by every data source, as ResourceBase.
type DataSourceBase struct {
	Data *Data
}

// Configure implements datasource.DataSourceWithConfigure.
func (b *DataSourceBase) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	b.Data = configure(req.ProviderData, &resp.Diagnostics)
}

// ActionBase is embedded by every action, as ResourceBase.
type ActionBase struct {
	Data *Data
}

// Configure implements action.ActionWithConfigure.
func (b *ActionBase) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	b.Data = configure(req.ProviderData, &resp.Diagnostics)
}

func configure(providerData any, diags *diag.Diagnostics) *Data {
	// Terraform calls Configure before the provider is configured (validation);
	// nil data then is normal.
	if providerData == nil {
		return nil
	}
	d, ok := providerData.(*Data)
	if !ok {
		diags.AddError("Unexpected Provider Data",
			fmt.Sprintf("Expected *providerdata.Data, got %T. This is a bug in the provider; please report it.", providerData))
		return nil
	}
	return d
}

// Target is one cluster a list resource or an every-cluster data source covers.
type Target struct {
	Key    string // kube.DefaultKey for the `kubernetes` connection
	Client *kube.Client
}

// Targets resolves a `cluster` attribute into clients: the cluster it names
// (checked), or, when null, every key of `clusters` and the `kubernetes`
// connection unless it reaches the API server of one of the keys (the usual
// case, which would report every object twice). A connection Terraform does
// not know yet is skipped with a warning saying it is not <what> (e.g.
// "listed"); one that cannot be built is an error.
func (d *Data) Targets(cluster types.String, what string, diags *diag.Diagnostics) []Target {
	if d == nil {
		diags.AddError("Provider Not Configured", "The provider was not configured before this request.")
		return nil
	}
	var keys []string
	switch {
	case !cluster.IsNull() && !cluster.IsUnknown():
		if !d.CheckCluster(cluster, path.Root("cluster"), diags) {
			return nil
		}
		keys = []string{cluster.ValueString()}
	default:
		if d.Clusters.Known(kube.DefaultKey) {
			keys = append(keys, kube.DefaultKey)
		}
		keys = append(keys, d.Clusters.Keys()...)
	}
	var out []Target
	for _, key := range keys {
		if d.Clusters.IsUnknown(key) {
			diags.AddWarning("Cluster Not "+cases(what), fmt.Sprintf("The connection of cluster %q is not known yet "+
				"(it depends on values computed during apply), so it is not %s.", key, what))
			continue
		}
		client, err := d.Clusters.Client(key)
		if err != nil {
			diags.AddAttributeError(path.Root("cluster"), "Cluster Connection Unavailable",
				fmt.Sprintf("Cannot connect to cluster %q: %v", key, err))
			continue
		}
		out = append(out, Target{Key: key, Client: client})
	}
	if len(out) > 1 && out[0].Key == kube.DefaultKey {
		for _, t := range out[1:] {
			if t.Client.RESTConfig().Host == out[0].Client.RESTConfig().Host {
				return out[1:]
			}
		}
	}
	return out
}

// cases capitalizes the first letter of a one-word participle for a summary.
func cases(word string) string {
	if word == "" {
		return word
	}
	return strings.ToUpper(word[:1]) + word[1:]
}
