package datasources

import (
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

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
