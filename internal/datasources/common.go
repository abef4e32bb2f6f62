package datasources

import (
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// durationOr parses an optional duration attribute, def when it is unset.
// validate.Duration() checks the value at plan time already; this catches a
// value that was unknown then.
func durationOr(v types.String, def time.Duration, p path.Path, diags *diag.Diagnostics) time.Duration {
	if v.IsNull() || v.IsUnknown() {
		return def
	}
	d, err := time.ParseDuration(v.ValueString())
	if err != nil || d <= 0 {
		validate.AttributeError(diags, p, "Invalid Duration", fmt.Sprintf("%q is not a positive duration.", v.ValueString()))
		return def
	}
	return d
}
