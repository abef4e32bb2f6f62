package datasources

import (
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
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

// spireServerAttribute is the `spire_server` block of the data sources that
// ask a SPIRE server through pod exec: which pod and container, with the
// defaults the resources use; description says what is asked.
func spireServerAttribute(description string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional:            true,
		MarkdownDescription: description,
		Attributes: map[string]schema.Attribute{
			"namespace": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Namespace of the SPIRE server pod. Defaults to the provider's `spire.namespace`.",
				Validators:          []validator.String{validate.DNSLabel()},
			},
			"pod": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Name of the SPIRE server pod. Defaults to `" + bundlesource.DefaultServerPod + "`.",
				Validators:          []validator.String{validate.K8sName()},
			},
			"container": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Container running `spire-server`. Defaults to `" + bundlesource.DefaultServerContainer + "`.",
				Validators:          []validator.String{validate.DNSLabel()},
			},
		},
	}
}
