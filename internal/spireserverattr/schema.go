package spireserverattr

import (
	aschema "github.com/hashicorp/terraform-plugin-framework/action/schema"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// serverFields are the attributes of a `spire_server` block, which names the
// SPIRE server pod a resource or data source asks through pod exec; unset,
// each takes its default (Model.Server).
var serverFields = []struct {
	name, description string
	validator         validator.String
}{
	{"namespace", "Namespace of the SPIRE server pod. Defaults to the cluster's `spire.namespace` (its own " +
		"`spire` object's, else the provider's).", validate.DNSLabel()},
	{"pod", "Name of the SPIRE server pod. Defaults to the cluster's SPIRE server pod: `spire-server-0` when its " +
		"`spire.install` is `operator`, `<helm_release>-server-0` when it is `helm`.", validate.K8sName()},
	{"container", "Container running `spire-server`. Defaults to `" + providerdata.SpireServerContainer +
		"`, the container of both installs.", validate.DNSLabel()},
}

// ResourceAttribute is a resource's `spire_server` block; description says
// what the resource asks.
func ResourceAttribute(description string) rschema.SingleNestedAttribute {
	attrs := make(map[string]rschema.Attribute, len(serverFields))
	for _, f := range serverFields {
		attrs[f.name] = rschema.StringAttribute{Optional: true, MarkdownDescription: f.description,
			Validators: []validator.String{f.validator}}
	}
	return rschema.SingleNestedAttribute{Optional: true, MarkdownDescription: description, Attributes: attrs}
}

// DataSourceAttribute is a data source's `spire_server` block; description
// says what the data source asks.
func DataSourceAttribute(description string) dschema.SingleNestedAttribute {
	attrs := make(map[string]dschema.Attribute, len(serverFields))
	for _, f := range serverFields {
		attrs[f.name] = dschema.StringAttribute{Optional: true, MarkdownDescription: f.description,
			Validators: []validator.String{f.validator}}
	}
	return dschema.SingleNestedAttribute{Optional: true, MarkdownDescription: description, Attributes: attrs}
}

// ActionAttribute is an action's `spire_server` block; description says
// what the action runs there.
func ActionAttribute(description string) aschema.SingleNestedAttribute {
	attrs := make(map[string]aschema.Attribute, len(serverFields))
	for _, f := range serverFields {
		attrs[f.name] = aschema.StringAttribute{Optional: true, MarkdownDescription: f.description,
			Validators: []validator.String{f.validator}}
	}
	return aschema.SingleNestedAttribute{Optional: true, MarkdownDescription: description, Attributes: attrs}
}
