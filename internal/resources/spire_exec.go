package resources

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
)

// spireServerModel locates the SPIRE server a resource asks through pod exec.
type spireServerModel struct {
	Namespace types.String `tfsdk:"namespace"`
	Pod       types.String `tfsdk:"pod"`
	Container types.String `tfsdk:"container"`
}

// spireServer is the pod a spire_server value names on client's cluster;
// what it leaves unset defaults to namespace (the provider's
// spire.namespace) and the usual pod and container names.
func spireServer(ctx context.Context, client *kube.Client, namespace string, value types.Object) (spireexec.Server, diag.Diagnostics) {
	s := spireexec.Server{Client: client, Namespace: namespace, Pod: bundlesource.DefaultServerPod, Container: bundlesource.DefaultServerContainer}
	var diags diag.Diagnostics
	if value.IsNull() || value.IsUnknown() {
		return s, diags
	}
	var m spireServerModel
	diags.Append(value.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	if v := m.Namespace.ValueString(); v != "" {
		s.Namespace = v
	}
	if v := m.Pod.ValueString(); v != "" {
		s.Pod = v
	}
	if v := m.Container.ValueString(); v != "" {
		s.Container = v
	}
	return s, diags
}
