package resources

import (
	"context"
	"fmt"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// listScope is the part of every list block that says where to look: one
// cluster of the provider or all of them, and which labels the objects carry.
// A list resource's config model embeds it (tfsdk fields are promoted).
type listScope struct {
	Cluster       types.String `tfsdk:"cluster"`
	LabelSelector types.String `tfsdk:"label_selector"`
}

// scope implements listConfig for every config model that embeds listScope.
func (s listScope) scope() listScope { return s }

// listConfig is a list resource's config model: a struct that embeds
// listScope and adds the list's own filters.
type listConfig interface{ scope() listScope }

// listShell is every list resource: its Metadata, kinds and identity come
// from the resource type's typeInfo, its config schema is the scope's
// attributes and the list's filters, and List streams what convert makes of
// each object. A list resource is one newListShell call.
type listShell[C listConfig] struct {
	providerdata.ResourceBase
	*typeInfo
	description string
	filters     map[string]listschema.Attribute
	// kindsFor narrows the type's kinds by the config (nil: all of them).
	kindsFor func(C) []kube.Kind
	convert  func(C) listConverter
}

var _ list.ListResourceWithConfigure = (*listShell[listScope])(nil)

// newListShell is the list resource of type t.
func newListShell[C listConfig](t *typeInfo, description string, filters map[string]listschema.Attribute,
	convert func(C) listConverter,
) *listShell[C] {
	return &listShell[C]{typeInfo: t, description: description, filters: filters, convert: convert}
}

func (l *listShell[C]) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	attrs := listScopeAttributes()
	maps.Copy(attrs, l.filters)
	resp.Schema = listschema.Schema{MarkdownDescription: l.description, Attributes: attrs}
}

func (l *listShell[C]) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var config C
	if d := req.Config.Get(ctx, &config); d.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(d)
		return
	}
	kinds := l.kinds
	if l.kindsFor != nil {
		kinds = l.kindsFor(config)
	}
	streamObjects(ctx, req, stream, l.Data, l.shape, config.scope(), kinds, l.convert(config))
}

// listScopeAttributes are the list block attributes for listScope; a list
// resource adds its own filters to the map.
func listScopeAttributes() map[string]listschema.Attribute {
	return map[string]listschema.Attribute{
		"cluster": listschema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Key of the provider's `clusters` map to list in. Unset lists every cluster of the " +
				"provider: each key of `clusters`, and the `kubernetes` connection when it is configured and reaches " +
				"an API server none of the keys does (so no object is listed twice).",
		},
		"label_selector": listschema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Kubernetes label selector (for example `team=platform,env!=dev`); only objects " +
				"whose labels match are listed.",
		},
	}
}

// targets resolves the scope into clients (providerdata.Data.Targets), after
// checking the label selector.
func (s listScope) targets(data *providerdata.Data, diags *diag.Diagnostics) []listTarget {
	if !s.LabelSelector.IsNull() {
		if _, err := labels.Parse(s.LabelSelector.ValueString()); err != nil {
			validate.AttributeError(diags, path.Root("label_selector"), "Invalid Label Selector",
				fmt.Sprintf("%q is not a Kubernetes label selector (%v). Valid forms: \"key=value\", \"key!=value\", "+
					"\"key in (a,b)\", \"key\", \"!key\", comma-separated.", s.LabelSelector.ValueString(), err))
			return nil
		}
	}
	var out []listTarget
	for _, t := range data.Targets(s.Cluster, "listed", diags) {
		out = append(out, listTarget{key: t.Key, client: t.Client})
	}
	return out
}

// listTarget is one cluster a list covers.
type listTarget struct {
	key    string // "" for the `kubernetes` connection
	client *kube.Client
}

// listedObject is what a list resource makes of one Kubernetes object.
type listedObject struct {
	id      objectIdentity
	display string
	// state is the resource model (what ImportState would store), set when
	// the request includes resource objects.
	state any
}

// listConverter turns one object into a listedObject; skip leaves it out
// (it does not match the list's filters, silently; or the resource cannot
// manage it as it is, with a warning saying why).
type listConverter func(ctx context.Context, t listTarget, obj *unstructured.Unstructured, includeResource bool) (
	lo listedObject, skip bool, diags diag.Diagnostics)

// streamObjects is the List body every list resource shares: for each
// target cluster and each kind, list the objects (namespace "" lists every
// namespace), convert them and push results until Terraform's limit. A
// kind the cluster does not serve is not an error for a list: there is
// nothing of that kind to adopt.
func streamObjects(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream, data *providerdata.Data,
	shape identityShape, scope listScope, kinds []kube.Kind, convert listConverter,
) {
	stream.Results = func(push func(list.ListResult) bool) {
		var diags diag.Diagnostics
		targets := scope.targets(data, &diags)
		if diags.HasError() {
			push(list.ListResult{Diagnostics: diags})
			return
		}
		warned := len(diags) == 0
		var sent int64
		for _, t := range targets {
			for _, kind := range kinds {
				objs, err := t.client.ListSelected(ctx, kind, "", scope.LabelSelector.ValueString())
				if err != nil {
					if served, serr := t.client.Served(ctx, kind); serr == nil && !served {
						continue
					}
					var d diag.Diagnostics
					d.Append(kube.Diagnostic(err, "list "+kind.Kind+" objects"))
					if !push(list.ListResult{Diagnostics: d}) {
						return
					}
					continue
				}
				for i := range objs {
					if req.Limit > 0 && sent >= req.Limit {
						return
					}
					lo, skip, d := convert(ctx, t, &objs[i], req.IncludeResource)
					if skip && !d.HasError() {
						// A skipped object may say why (a warning), so that
						// nothing disappears from a list without a word.
						if len(d) > 0 && !push(list.ListResult{Diagnostics: d}) {
							return
						}
						continue
					}
					result := req.NewListResult(ctx)
					if !warned {
						result.Diagnostics.Append(diags...)
						warned = true
					}
					result.Diagnostics.Append(d...)
					result.DisplayName = lo.display
					result.Diagnostics.Append(lo.id.set(ctx, shape, result.Identity)...)
					if req.IncludeResource && lo.state != nil {
						result.Diagnostics.Append(result.Resource.Set(ctx, lo.state)...)
					}
					sent++
					if !push(result) {
						return
					}
				}
			}
		}
		if !warned {
			push(list.ListResult{Diagnostics: diags})
		}
	}
}
