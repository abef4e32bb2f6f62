package spireexec

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// Model is the spire_server object of every resource, data
// source and action that asks a SPIRE server through pod exec. It is
// declared, and its defaults resolved, here only, so that an unset field
// means the same pod everywhere.
type Model struct {
	Namespace types.String `tfsdk:"namespace"`
	Pod       types.String `tfsdk:"pod"`
	Container types.String `tfsdk:"container"`
}

// Server is the pod m names on client's cluster: what m leaves unset
// defaults to namespace (the provider's spire.namespace) and the usual pod
// and container names.
func (m Model) Server(client *kube.Client, namespace string) Server {
	return Server{
		Client:    client,
		Namespace: providerdata.StringOr(m.Namespace, namespace),
		Pod:       providerdata.StringOr(m.Pod, bundlesource.DefaultServerPod),
		Container: providerdata.StringOr(m.Container, bundlesource.DefaultServerContainer),
	}
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
// (ModelFrom, then Server).
func ServerFrom(ctx context.Context, client *kube.Client, namespace string, value types.Object) (Server, diag.Diagnostics) {
	m, diags := ModelFrom(ctx, value)
	return m.Server(client, namespace), diags
}
