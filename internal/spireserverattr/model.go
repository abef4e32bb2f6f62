// Package spireserverattr is the `spire_server` attribute of every resource,
// data source and action that asks a SPIRE server through pod exec: its
// schema for each of the three, and its model, read into the
// spireexec.Server it names. The schema and the framework stay here, in the
// provider's layer, so that spireexec knows only Kubernetes and SPIRE.
package spireserverattr

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
)

// Model is the spire_server object. It is declared here only, and read
// into a server only by spireexec.NewServer, so that an unset field means
// the same pod everywhere.
type Model struct {
	Namespace types.String `tfsdk:"namespace"`
	Pod       types.String `tfsdk:"pod"`
	Container types.String `tfsdk:"container"`
}

// Server is the pod m names on client's cluster: what m leaves unset is
// spire's, the cluster's SPIRE as the provider resolved it
// (providerdata.Data.SpireOf), so an unset field means the install's pod.
func (m Model) Server(client *kube.Client, spire providerdata.Spire) spireexec.Server {
	return spireexec.NewServer(client, providerdata.StringOr(m.Namespace, spire.Namespace),
		providerdata.StringOr(m.Pod, spire.Pod), providerdata.StringOr(m.Container, spire.Container))
}

// ModelFrom reads a spire_server value; null or unknown is every
// default.
func ModelFrom(ctx context.Context, value types.Object) (Model, diag.Diagnostics) {
	var m Model
	if value.IsNull() || value.IsUnknown() {
		return m, nil
	}
	diags := value.As(ctx, &m, basetypes.ObjectAsOptions{})
	return m, diags
}

// ServerFrom is the pod a spire_server value names on client's cluster
// (ModelFrom, then Server with the cluster's SPIRE from data).
func ServerFrom(ctx context.Context, client *kube.Client, data *providerdata.Data, value types.Object) (spireexec.Server, diag.Diagnostics) {
	m, diags := ModelFrom(ctx, value)
	return m.Server(client, data.SpireOf(client)), diags
}
