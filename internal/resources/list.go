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
	// lister, for a type whose things are no Kubernetes objects, lists one
	// target's things instead of convert (withLister).
	lister func(ctx context.Context, data *providerdata.Data, config C, includeResource bool) func(t listTarget, out listOutput) bool
}

// withLister makes l list what lister finds on each target, for a type
// whose things are no Kubernetes objects; l's convert is then unused.
func (l *listShell[C]) withLister(
	lister func(ctx context.Context, data *providerdata.Data, config C, includeResource bool) func(t listTarget, out listOutput) bool,
) *listShell[C] {
	l.lister = lister
	return l
}

var _ list.ListResourceWithConfigure = (*listShell[listScope])(nil)

// newListShell is the list resource of type t.
func newListShell[C listConfig](t interface{ info() *typeInfo }, description string, filters map[string]listschema.Attribute,
	convert func(C) listConverter,
) *listShell[C] {
	return &listShell[C]{typeInfo: t.info(), description: description, filters: filters, convert: convert}
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
	if l.lister != nil {
		streamTargets(ctx, req, stream, l.Data, l.shape, config.scope(), l.lister(ctx, l.Data, config, req.IncludeResource))
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

// streamObjects is the List body every list resource of Kubernetes objects
// shares: for each target cluster and each kind, list the objects
// (namespace "" lists every namespace) and convert them. A kind the cluster
// does not serve is not an error for a list: there is nothing of that kind
// to adopt.
func streamObjects(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream, data *providerdata.Data,
	shape identityShape, scope listScope, kinds []kube.Kind, convert listConverter,
) {
	streamTargets(ctx, req, stream, data, shape, scope, func(t listTarget, out listOutput) bool {
		for _, kind := range kinds {
			objs, err := t.client.ListSelected(ctx, kind, "", scope.LabelSelector.ValueString())
			if err != nil {
				if served, serr := t.client.Served(ctx, kind); serr == nil && !served {
					continue
				}
				var d diag.Diagnostics
				d.Append(kube.Diagnostic(err, "list "+kind.Kind+" objects"))
				if !out.fail(d) {
					return false
				}
				continue
			}
			for i := range objs {
				lo, skip, d := convert(ctx, t, &objs[i], req.IncludeResource)
				// Who owns a Helm release's object shows in every list,
				// as the refusal of its import names it.
				lo.display += helmDisplaySuffix(&objs[i])
				if !out.send(lo, skip, d) {
					return false
				}
			}
		}
		return true
	})
}

// listOutput is how a target's lister hands results to streamTargets; both
// report false once the list must stop (Terraform's limit, or it stopped
// reading).
type listOutput struct {
	// send pushes one converted thing; skip leaves it out (it does not match
	// the list's filters, silently; or the resource cannot manage it as it
	// is, with a warning in diags saying why).
	send func(lo listedObject, skip bool, diags diag.Diagnostics) bool
	// fail pushes why a target could not be listed.
	fail func(diags diag.Diagnostics) bool
}

// streamTargets is the List body every list resource shares: lister lists
// each target cluster of the scope into out, and streamTargets pushes the
// results until Terraform's limit, with the scope's warnings on the first.
func streamTargets(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream, data *providerdata.Data,
	shape identityShape, scope listScope, lister func(t listTarget, out listOutput) bool,
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
		out := listOutput{
			fail: func(d diag.Diagnostics) bool { return push(list.ListResult{Diagnostics: d}) },
			send: func(lo listedObject, skip bool, d diag.Diagnostics) bool {
				if req.Limit > 0 && sent >= req.Limit {
					return false
				}
				if skip && !d.HasError() {
					// A skipped thing may say why (a warning), so that
					// nothing disappears from a list without a word.
					return len(d) == 0 || push(list.ListResult{Diagnostics: d})
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
				return push(result)
			},
		}
		for _, t := range targets {
			if !lister(t, out) {
				return
			}
		}
		if !warned {
			push(list.ListResult{Diagnostics: diags})
		}
	}
}
