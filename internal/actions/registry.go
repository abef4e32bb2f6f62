// Package actions holds the provider's actions (Terraform >= 1.14): one-off
// operations run by `terraform apply -invoke=action.<type>.<name>` or by an
// `action_trigger` in a resource's `lifecycle` block. They change nothing
// Terraform tracks, so they hold no state; each reports progress while it
// runs and fails with what the asked system answered.
package actions

import (
	"github.com/hashicorp/terraform-plugin-framework/action"
)

// All returns every action constructor of the provider, sorted by name.
func All() []func() action.Action {
	return []func() action.Action{
		NewDomainVerificationCheckAction,
		NewSpireBundleRefreshAction,
	}
}
