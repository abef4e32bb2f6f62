package resources

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// One fact, one warning: within one Terraform command's walk, no two
// warnings may be about the same subject. The plan walk calls ModifyPlan;
// the apply walk calls ModifyPlan again (Terraform plans every change once
// more before applying it and shows that plan's warnings) and then Create,
// Update or Delete. These tests drive both walks of every resource's
// create, update and destroy as far as a unit test can: on a cluster that
// does not answer, so that every check that needs one stops at once.

// sharedSubjects are the subjects of warnings without an attribute path,
// by summary. Two summaries naming one subject say one fact twice (the
// destroy plan's warning and the one Delete used to add).
var sharedSubjects = map[string]string{
	"Federation Stays on the SpireServer":           "spec.federation stays after destroy",
	"Federation Left on the SpireServer":            "spec.federation stays after destroy",
	"Cluster Unreachable: Plan-Time Checks Skipped": "cluster does not answer",
}

// walkScoped are the subjects said once per walk for every object together.
var walkScoped = map[string]bool{"cluster does not answer": true}

// subject is what a warning is about: its attribute, else its entry in
// sharedSubjects, else its summary.
func subject(d diag.Diagnostic) string {
	if p, ok := d.(diag.DiagnosticWithPath); ok && !p.Path().Equal(path.Empty()) {
		return "attribute " + p.Path().String()
	}
	if s, ok := sharedSubjects[d.Summary()]; ok {
		return s
	}
	return d.Summary()
}

// walkWarnings collects the warnings of one walk and the second warnings
// about a subject (dups).
type walkWarnings struct {
	name string
	seen map[string]string // subject key -> summary of its first warning
	dups []string
}

func newWalk(name string) *walkWarnings {
	return &walkWarnings{name: name, seen: map[string]string{}}
}

func (w *walkWarnings) add(object string, diags diag.Diagnostics) {
	for _, d := range diags.Warnings() {
		s := subject(d)
		key := object + ": " + s
		if walkScoped[s] {
			key = s
		}
		if first, dup := w.seen[key]; dup {
			w.dups = append(w.dups, fmt.Sprintf("%s: two warnings about %s: %q and %q", w.name, key, first, d.Summary()))
			continue
		}
		w.seen[key] = d.Summary()
	}
}

func (w *walkWarnings) has(summary string) bool {
	for _, s := range w.seen {
		if s == summary {
			return true
		}
	}
	return false
}

// deadClusters is a registry whose cluster "dead" is 127.0.0.1:1, where
// nothing listens.
func deadClusters() *providerdata.Data {
	clusters := kube.NewClusters(kube.Settings{FieldManager: "zerotrust", QPS: 50, Burst: 100})
	clusters.Add("dead", kube.Connection{Host: "https://127.0.0.1:1", Token: "x", Insecure: true}, false)
	return &providerdata.Data{Clusters: clusters, Spire: providerdata.ResolveSpire(providerdata.SpireSettings{}),
		MaxFederatedTrustDomains: 50}
}

// lifecycleResource is what the tests call on a resource.
type lifecycleResource interface {
	resource.ResourceWithConfigure
	resource.ResourceWithModifyPlan
}

type object struct {
	name    string
	r       lifecycleResource
	schema  schema.Schema
	idSchem *identityschema.Schema
}

func objectsOf(t *testing.T, data *providerdata.Data) []object {
	t.Helper()
	ctx := context.Background()
	var out []object
	for _, newResource := range All() {
		r, ok := newResource().(lifecycleResource)
		if !ok {
			t.Fatalf("%T has no ModifyPlan", newResource())
		}
		var meta resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "zerotrust"}, &meta)
		var configured resource.ConfigureResponse
		r.Configure(ctx, resource.ConfigureRequest{ProviderData: data}, &configured)
		var sch resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sch)
		o := object{name: meta.TypeName, r: r, schema: sch.Schema}
		if ri, ok := r.(resource.ResourceWithIdentity); ok {
			var id resource.IdentitySchemaResponse
			ri.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &id)
			o.idSchem = &id.IdentitySchema
		}
		out = append(out, o)
	}
	return out
}

// value is a value of the object's schema with only the given top-level
// attributes set.
func (o object) value(t *testing.T, attrs map[string]any) tftypes.Value {
	t.Helper()
	ctx := context.Background()
	st := tfsdk.State{Schema: o.schema, Raw: tftypes.NewValue(o.schema.Type().TerraformType(ctx), nil)}
	for name, v := range attrs {
		if _, ok := o.schema.Attributes[name]; !ok {
			continue
		}
		if d := st.SetAttribute(ctx, path.Root(name), v); d.HasError() {
			t.Fatalf("%s.%s: %v", o.name, name, d)
		}
	}
	return st.Raw
}

func (o object) identity() *tfsdk.ResourceIdentity {
	if o.idSchem == nil {
		return nil
	}
	return &tfsdk.ResourceIdentity{Schema: *o.idSchem,
		Raw: tftypes.NewValue(o.idSchem.Type().TerraformType(context.Background()), nil)}
}

// plan is one ModifyPlan: prior null for a create, planned null for a destroy.
func (o object) plan(prior, planned tftypes.Value) resource.ModifyPlanResponse {
	ctx := context.Background()
	config := planned
	resp := resource.ModifyPlanResponse{Plan: tfsdk.Plan{Schema: o.schema, Raw: planned}}
	o.r.ModifyPlan(ctx, resource.ModifyPlanRequest{
		State: tfsdk.State{Schema: o.schema, Raw: prior}, Plan: tfsdk.Plan{Schema: o.schema, Raw: planned},
		Config: tfsdk.Config{Schema: o.schema, Raw: config},
	}, &resp)
	return resp
}

// apply is what the apply walk calls after its plan, bounded so the dead
// cluster fails it at once instead of after the client's retries.
func (o object) apply(prior tftypes.Value, planned resource.ModifyPlanResponse, config tftypes.Value) diag.Diagnostics {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	state := tfsdk.State{Schema: o.schema, Raw: prior}
	switch {
	case planned.Plan.Raw.IsNull():
		resp := resource.DeleteResponse{State: state}
		o.r.Delete(ctx, resource.DeleteRequest{State: state}, &resp)
		return resp.Diagnostics
	case prior.IsNull():
		resp := resource.CreateResponse{State: tfsdk.State{Schema: o.schema, Raw: planned.Plan.Raw}, Identity: o.identity()}
		o.r.Create(ctx, resource.CreateRequest{Plan: planned.Plan, Config: tfsdk.Config{Schema: o.schema, Raw: config}}, &resp)
		return resp.Diagnostics
	default:
		resp := resource.UpdateResponse{State: tfsdk.State{Schema: o.schema, Raw: planned.Plan.Raw}, Identity: o.identity()}
		o.r.Update(ctx, resource.UpdateRequest{Plan: planned.Plan, State: state, Config: tfsdk.Config{Schema: o.schema, Raw: config}}, &resp)
		return resp.Diagnostics
	}
}

// lifecycle is one change of every resource: its prior and configured
// attributes (nil: no object before, or destroyed).
type lifecycle struct {
	name          string
	prior, config map[string]any
}

// TestOneWarningPerSubject runs the plan walk and the apply walk of a
// create, an update and a destroy of every resource on a cluster that does
// not answer, all objects of a walk together, as Terraform does.
func TestOneWarningPerSubject(t *testing.T) {
	cluster := map[string]any{"cluster": "dead", "force_conflicts": false}
	changed := map[string]any{"cluster": "dead", "force_conflicts": true}
	for _, lc := range []lifecycle{
		{"create", nil, cluster},
		{"update", cluster, changed},
		{"destroy", cluster, nil},
	} {
		t.Run(lc.name, func(t *testing.T) {
			runLifecycle(t, lc, nil)
		})
	}
}

// runLifecycle runs lc's plan walk and apply walk for every resource;
// extra adds attributes for one resource type.
func runLifecycle(t *testing.T, lc lifecycle, extra map[string]map[string]any) (plan, apply *walkWarnings) {
	t.Helper()
	plan, apply = newWalk(lc.name+" plan"), newWalk(lc.name+" apply")
	planData, applyData := deadClusters(), deadClusters()
	planObjects, applyObjects := objectsOf(t, planData), objectsOf(t, applyData)
	for i, o := range planObjects {
		values := func(attrs map[string]any) tftypes.Value {
			if attrs == nil {
				return tftypes.NewValue(o.schema.Type().TerraformType(context.Background()), nil)
			}
			merged := map[string]any{}
			for k, v := range attrs {
				merged[k] = v
			}
			for k, v := range extra[o.name] {
				merged[k] = v
			}
			return o.value(t, merged)
		}
		prior, config := values(lc.prior), values(lc.config)
		plan.add(o.name, o.plan(prior, config).Diagnostics)

		a := applyObjects[i]
		replanned := a.plan(prior, config)
		apply.add(a.name, replanned.Diagnostics)
		apply.add(a.name, a.apply(prior, replanned, config))
	}
	for _, dup := range append(plan.dups, apply.dups...) {
		t.Error(dup)
	}
	if !plan.has("Cluster Unreachable: Plan-Time Checks Skipped") && lc.config != nil && lc.prior == nil {
		t.Errorf("%s: the plan did not say that cluster \"dead\" does not answer", lc.name)
	}
	return plan, apply
}

// TestOneWarningPerSubjectFederationChoices: managed_route = false and a
// federation destroy, the two cases where a fact was said twice, are said
// once per walk.
func TestOneWarningPerSubjectFederationChoices(t *testing.T) {
	routeOff := map[string]map[string]any{"zerotrust_spire_federation": {"managed_route": false}}
	plan, apply := runLifecycle(t, lifecycle{"create managed_route = false",
		nil, map[string]any{"cluster": "dead", "force_conflicts": false}}, routeOff)
	for _, w := range []*walkWarnings{plan, apply} {
		if !w.has("SpireServer Will Not Become Ready") {
			t.Errorf("%s: no warning about managed_route = false: %v", w.name, w.seen)
		}
	}
	plan, _ = runLifecycle(t, lifecycle{"destroy", map[string]any{"cluster": "dead", "force_conflicts": false}, nil}, nil)
	if !plan.has("Federation Stays on the SpireServer") {
		t.Errorf("the destroy plan did not say that spec.federation stays: %v", plan.seen)
	}
}

func TestSubjectOfSharedFacts(t *testing.T) {
	var diags diag.Diagnostics
	diags.AddWarning("Federation Stays on the SpireServer", "plan")
	diags.AddWarning("Federation Left on the SpireServer", "apply")
	w := newWalk("destroy")
	w.add("zerotrust_spire_federation", diags)
	if len(w.dups) != 1 {
		t.Errorf("the destroy's two warnings about spec.federation were not seen as one fact said twice: %v", w.dups)
	}
}
