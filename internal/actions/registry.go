// Package actions holds the provider's actions (Terraform >= 1.14): one-off
// operations run by `terraform apply -invoke=action.<type>.<name>` or by an
// `action_trigger` in a resource's `lifecycle` block. They change nothing
// Terraform tracks, so they hold no state; each reports progress while it
// runs and fails with what the asked system answered.
package actions

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// All returns every action constructor of the provider, sorted by name.
func All() []func() action.Action {
	return []func() action.Action{
		NewDomainVerificationCheckAction,
		NewSpireBundleRefreshAction,
	}
}

// actionBase is embedded by every action; its Configure checks the type of
// the provider data once, as providerdata.ResourceBase does for resources.
type actionBase struct {
	Data *providerdata.Data
}

// Configure implements action.ActionWithConfigure.
func (b *actionBase) Configure(_ context.Context, req action.ConfigureRequest, resp *action.ConfigureResponse) {
	b.Data = configure(req.ProviderData, &resp.Diagnostics)
}

func configure(providerData any, diags *diag.Diagnostics) *providerdata.Data {
	// Terraform calls Configure before the provider is configured
	// (validation); nil data then is normal.
	if providerData == nil {
		return nil
	}
	d, ok := providerData.(*providerdata.Data)
	if !ok {
		diags.AddError("Unexpected Provider Data",
			fmt.Sprintf("Expected *providerdata.Data, got %T. This is a bug in the provider; please report it.", providerData))
		return nil
	}
	return d
}
