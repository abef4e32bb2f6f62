package conformance

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/resources"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/typename"
)

// mapping places one attribute on the CRD field it is written to.
type mapping struct {
	// Attr is the attribute path: names joined by ".", "*" for a map key or
	// a list element ("federates_with.*.bundle_endpoint_url").
	Attr string
	// Field is the CRD field path under openAPIV3Schema, "[]" after an array
	// ("spec.federation.federatesWith[].bundleEndpointUrl").
	Field string
	// Sample is a value the attribute accepts, used to fill lists and maps
	// when their size limits are checked.
	Sample string
	// Except names CRD checks ("enum", "minItems", ...) the provider meets
	// another way, with how (an empty map is written as no field at all).
	Except map[string]string
}

// transition answers one CEL transition rule of the CRD.
type transition struct {
	Field   string // the rule's place, as transitionRule.Field
	Message string // the rule's message (or rule text)
	// Exactly one of these says how the provider mirrors the rule.
	Replace    []string // attributes whose change replaces the resource
	PlanError  string   // the plan-time check (and the test proving it)
	NotWritten string   // why the rule cannot be violated by this resource
}

// resourceContract is one resource's table.
type resourceContract struct {
	TypeName string // zerotrust_...
	CRD      string // plural.group
	Version  string
	Fields   []mapping
	// Unmapped attributes the resource does not write as a field of this CRD
	// (connection, timeouts, behaviour switches, values read from status),
	// with the reason.
	Unmapped map[string]string
	// Transitions answers every transition rule on, above (when it names the
	// field) or below a mapped field.
	Transitions []transition
	// Context holds string attributes every checked configuration sets too
	// (mesh.kind for a resource that writes several kinds).
	Context map[string]string
}

// contracts is filled by one file per resource.
var contracts []resourceContract

// withoutCRD are the resources that write no Kubernetes object, so no CRD
// field, with what they write instead.
var withoutCRD = map[string]string{
	typename.SpireBundle.Full(): "a bundle in SPIRE's datastore, through `spire-server bundle set` in the server pod",
}

func TestEveryResourceHasAContract(t *testing.T) {
	var want []string
	for _, f := range resources.All() {
		if name := typeName(f()); withoutCRD[name] == "" {
			want = append(want, name)
		}
	}
	var got []string
	for _, c := range contracts {
		got = append(got, c.TypeName)
	}
	sort.Strings(want)
	sort.Strings(got)
	got = slices.Compact(got) // a resource writing several kinds has one table per kind
	if !slices.Equal(want, got) {
		t.Fatalf("resources %v, contracts %v: every resource needs a contract table in this package", want, got)
	}
}

func typeName(r resource.Resource) string {
	var resp resource.MetadataResponse
	r.Metadata(context.Background(), resource.MetadataRequest{ProviderTypeName: "zerotrust"}, &resp)
	return resp.TypeName
}

func TestMappingsMatchUpstreamCRDs(t *testing.T) {
	ctx := context.Background()
	srv := providerserver.NewProtocol6(provider.New("test")())()
	schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range contracts {
		t.Run(c.TypeName+"/"+c.CRD+"/"+c.Version, func(t *testing.T) {
			proto := schemas.ResourceSchemas[c.TypeName]
			if proto == nil {
				t.Fatalf("the provider has no resource %s", c.TypeName)
			}
			attrs := frameworkAttributes(t, c.TypeName)
			crd, err := crdSchema(c.CRD, c.Version)
			if err != nil {
				t.Fatal(err)
			}
			checkPlaced(t, c, attrs)
			v := validator{t: t, srv: srv, typeName: c.TypeName, typ: proto.ValueType(), context: c.Context}
			for _, m := range c.Fields {
				a, ok := attrs[m.Attr]
				if !ok {
					t.Errorf("%s: no such attribute", m.Attr)
					continue
				}
				node, preserved, err := crd.lookup(m.Field)
				if err != nil {
					t.Errorf("%s -> %s: %v", m.Attr, m.Field, err)
					continue
				}
				if preserved {
					continue // the CRD accepts anything there
				}
				if _, ok := m.Except["type"]; ok {
					continue
				}
				if err := compatible(a.GetType().TerraformType(ctx), node); err != nil {
					t.Errorf("%s -> %s: %v", m.Attr, m.Field, err)
					continue
				}
				v.enum(m, node)
				v.bounds(m, node)
			}
			checkTransitions(t, c, crd, attrs)
		})
	}
}

// checkPlaced fails for any configurable attribute the table neither maps
// nor explains, and for table rows naming attributes that do not exist.
func checkPlaced(t *testing.T, c resourceContract, attrs map[string]schema.Attribute) {
	t.Helper()
	placed := map[string]bool{}
	for _, m := range c.Fields {
		placed[m.Attr] = true
	}
	for a := range c.Unmapped {
		placed[a] = true
		if _, ok := attrs[a]; !ok {
			t.Errorf("Unmapped names %q, which is no attribute", a)
		}
	}
	for p, a := range attrs {
		if !a.IsRequired() && !a.IsOptional() {
			continue // computed only: read, never written
		}
		if placed[p] || placedBelow(p, c.Unmapped) {
			continue
		}
		t.Errorf("attribute %s is written by the user but placed on no CRD field: add it to the contract (Fields or Unmapped)", p)
	}
}

// placedBelow: an unmapped parent covers its children.
func placedBelow(p string, unmapped map[string]string) bool {
	for u := range unmapped {
		if strings.HasPrefix(p, u+".") {
			return true
		}
	}
	return false
}

// frameworkAttributes flattens the resource's schema to attribute paths.
func frameworkAttributes(t *testing.T, name string) map[string]schema.Attribute {
	t.Helper()
	for _, f := range resources.All() {
		r := f()
		if typeName(r) != name {
			continue
		}
		var resp resource.SchemaResponse
		r.Schema(context.Background(), resource.SchemaRequest{}, &resp)
		if resp.Diagnostics.HasError() {
			t.Fatalf("schema of %s: %v", name, resp.Diagnostics)
		}
		out := map[string]schema.Attribute{}
		flatten("", resp.Schema.Attributes, out)
		return out
	}
	t.Fatalf("no resource %s", name)
	return nil
}

func flatten(prefix string, attrs map[string]schema.Attribute, out map[string]schema.Attribute) {
	for name, a := range attrs {
		p := name
		if prefix != "" {
			p = prefix + "." + name
		}
		out[p] = a
		switch n := a.(type) {
		case schema.SingleNestedAttribute:
			flatten(p, n.Attributes, out)
		case schema.MapNestedAttribute:
			flatten(p+".*", n.NestedObject.Attributes, out)
		case schema.ListNestedAttribute:
			flatten(p+".*", n.NestedObject.Attributes, out)
		case schema.SetNestedAttribute:
			flatten(p+".*", n.NestedObject.Attributes, out)
		}
	}
}

// compatible says whether a value of Terraform type typ can be written as
// the CRD node's type.
func compatible(typ tftypes.Type, node crdNode) error {
	ct := node.typ()
	switch {
	case typ.Is(tftypes.String):
		if ct == "string" || ct == "int-or-string" {
			return nil
		}
	case typ.Is(tftypes.Number):
		if ct == "integer" || ct == "number" || ct == "int-or-string" {
			return nil
		}
	case typ.Is(tftypes.Bool):
		if ct == "boolean" {
			return nil
		}
		// The operators' "true"/"false" string switches.
		if ct == "string" && slices.Equal(node.enum(), []string{"false", "true"}) {
			return nil
		}
	case typ.Is(tftypes.List{}) || typ.Is(tftypes.Set{}):
		if ct == "array" {
			items, _ := node["items"].(map[string]any)
			return compatible(elementType(typ), items)
		}
	case typ.Is(tftypes.Map{}):
		elem := elementType(typ)
		if ct == "object" {
			add, ok := node["additionalProperties"].(map[string]any)
			if !ok {
				return fmt.Errorf("map attribute, but the CRD object declares no additionalProperties")
			}
			return compatible(elem, add)
		}
		if ct == "array" && elem.Is(tftypes.Object{}) {
			return nil // a list keyed by one of its fields, as a map keyed by it
		}
	case typ.Is(tftypes.Object{}):
		if ct == "object" {
			return nil
		}
	}
	return fmt.Errorf("attribute type %s cannot be written as CRD type %q", typ, ct)
}

func elementType(typ tftypes.Type) tftypes.Type {
	switch t := typ.(type) {
	case tftypes.List:
		return t.ElementType
	case tftypes.Set:
		return t.ElementType
	case tftypes.Map:
		return t.ElementType
	}
	return nil
}

// checkTransitions finds every transition rule that concerns a mapped field
// and checks the table answers it, and that Replace answers are real.
func checkTransitions(t *testing.T, c resourceContract, crd crdNode, attrs map[string]schema.Attribute) {
	t.Helper()
	answered := map[string]transition{}
	for _, tr := range c.Transitions {
		answered[tr.Field+"\x00"+tr.Message] = tr
		n := 0
		for _, s := range []bool{len(tr.Replace) > 0, tr.PlanError != "", tr.NotWritten != ""} {
			if s {
				n++
			}
		}
		if n != 1 {
			t.Errorf("transition %s %q: give exactly one of Replace, PlanError, NotWritten", tr.Field, tr.Message)
		}
		for _, a := range tr.Replace {
			attr, ok := attrs[a]
			if !ok {
				t.Errorf("transition %s %q: Replace names %q, which is no attribute", tr.Field, tr.Message, a)
				continue
			}
			if !requiresReplace(attr) {
				t.Errorf("transition %s %q: attribute %s has no RequiresReplace plan modifier", tr.Field, tr.Message, a)
			}
		}
	}
	for _, r := range crd.transitionRules("") {
		if !concerns(r, c.Fields) {
			continue
		}
		if _, ok := answered[r.Field+"\x00"+r.Message]; !ok {
			t.Errorf("the CRD's transition rule at %q (%q, rule %q) concerns fields this resource writes: "+
				"mirror it (RequiresReplace or a plan-time error) and answer it in the contract", r.Field, r.Message, r.Rule)
		}
	}
}

// concerns: the rule sits on or below a mapped field, or above one and names
// the step towards it.
func concerns(r transitionRule, fields []mapping) bool {
	for _, m := range fields {
		if r.Field == m.Field || strings.HasPrefix(r.Field, m.Field+".") || strings.HasPrefix(r.Field, m.Field+"[]") {
			return true
		}
		rest, ok := strings.CutPrefix(m.Field, r.Field)
		if r.Field != "" && (!ok || !strings.HasPrefix(rest, ".")) {
			continue
		}
		// The step towards the field; at the root "spec" says nothing, so
		// take two steps there ("spec.federation").
		steps := strings.Split(strings.ReplaceAll(strings.TrimPrefix(rest, "."), "[]", ""), ".")
		n := 1
		if r.Field == "" {
			n = 2
		}
		next := strings.Join(steps[:min(n, len(steps))], ".")
		if strings.Contains(r.Rule, next) {
			return true
		}
	}
	return false
}

func requiresReplace(a schema.Attribute) bool {
	var descs []string
	switch a := a.(type) {
	case schema.StringAttribute:
		descs = descriptions(a.PlanModifiers)
	case schema.Int64Attribute:
		descs = descriptions(a.PlanModifiers)
	case schema.BoolAttribute:
		descs = descriptions(a.PlanModifiers)
	case schema.SingleNestedAttribute:
		descs = descriptions(a.PlanModifiers)
	case schema.ListAttribute:
		descs = descriptions(a.PlanModifiers)
	}
	for _, d := range descs {
		d = strings.ToLower(d)
		if strings.Contains(d, "destroy and recreate") || strings.Contains(d, "replace") {
			return true
		}
	}
	return false
}

// descriptions of plan modifiers of any attribute type.
func descriptions[M interface{ Description(context.Context) string }](mods []M) []string {
	out := make([]string, 0, len(mods))
	for _, m := range mods {
		out = append(out, m.Description(context.Background()))
	}
	return out
}

// validator runs the provider's own config validation (attribute validators
// and resource ValidateConfig) on configurations that set one attribute.
type validator struct {
	t        *testing.T
	srv      tfprotov6.ProviderServer
	typeName string
	typ      tftypes.Type
	context  map[string]string
}

// enum: every value the CRD allows passes, a value it does not is refused.
func (v validator) enum(m mapping, node crdNode) {
	values := node.enum()
	if _, ok := m.Except["enum"]; values == nil || ok {
		return
	}
	attrType := v.attrType(m.Attr)
	value := func(s string) (tftypes.Value, bool) {
		switch {
		case attrType.Is(tftypes.String):
			return tftypes.NewValue(tftypes.String, s), true
		case attrType.Is(tftypes.Number):
			f, ok := new(big.Float).SetString(s)
			return tftypes.NewValue(tftypes.Number, f), ok
		}
		return tftypes.Value{}, false // bool switches written as "true"/"false"
	}
	outside := "not-one-of-the-enum"
	if attrType.Is(tftypes.Number) {
		outside = "1000003"
	}
	for _, s := range append(values, outside) {
		val, ok := value(s)
		if !ok {
			return
		}
		errs := v.errorsAt(m.Attr, val)
		switch {
		case s != outside && len(errs) > 0:
			v.t.Errorf("%s = %s: the CRD (%s) allows it, the provider refuses it: %s", m.Attr, s, m.Field, strings.Join(errs, "; "))
		case s == outside && len(errs) == 0:
			v.t.Errorf("%s: the CRD (%s) allows only %v, the provider accepts %s at plan", m.Attr, m.Field, values, s)
		}
	}
}

// bounds: the CRD's minimum/maximum, lengths and item counts hold at plan.
func (v validator) bounds(m mapping, node crdNode) {
	attrType := v.attrType(m.Attr)
	switch {
	case attrType.Is(tftypes.Number):
		if lo, ok := node.number("minimum"); ok {
			v.want(m, "minimum", tftypes.NewValue(tftypes.Number, big.NewFloat(float64(lo))), true)
			v.want(m, "minimum", tftypes.NewValue(tftypes.Number, big.NewFloat(float64(lo-1))), false)
		}
		if hi, ok := node.number("maximum"); ok {
			v.want(m, "maximum", tftypes.NewValue(tftypes.Number, big.NewFloat(float64(hi))), true)
			v.want(m, "maximum", tftypes.NewValue(tftypes.Number, big.NewFloat(float64(hi+1))), false)
		}
	case attrType.Is(tftypes.String):
		if hi, ok := node.number("maxLength"); ok {
			v.want(m, "maxLength", tftypes.NewValue(tftypes.String, strings.Repeat("a", int(hi)+1)), false)
		}
		if lo, ok := node.number("minLength"); ok && lo > 0 {
			v.want(m, "minLength", tftypes.NewValue(tftypes.String, strings.Repeat("a", int(lo)-1)), false)
		}
	case attrType.Is(tftypes.List{}) || attrType.Is(tftypes.Set{}) || attrType.Is(tftypes.Map{}):
		if hi, ok := node.number("maxItems"); ok {
			v.want(m, "maxItems", v.collection(m, attrType, int(hi)+1), false)
		}
		if lo, ok := node.number("minItems"); ok && lo > 0 {
			v.want(m, "minItems", v.collection(m, attrType, int(lo)-1), false)
		}
		if hi, ok := node.number("maxProperties"); ok {
			v.want(m, "maxProperties", v.collection(m, attrType, int(hi)+1), false)
		}
	}
}

func (v validator) want(m mapping, rule string, val tftypes.Value, accepted bool) {
	if _, ok := m.Except[rule]; ok {
		return
	}
	errs := v.errorsAt(m.Attr, val)
	switch {
	case accepted && len(errs) > 0:
		v.t.Errorf("%s = %v: within the CRD's %s (%s), but the provider refuses it: %s", m.Attr, val, rule, m.Field, strings.Join(errs, "; "))
	case !accepted && len(errs) == 0:
		v.t.Errorf("%s = %s: beyond the CRD's %s (%s), but the provider accepts it at plan", m.Attr, short(val), rule, m.Field)
	}
}

func short(v tftypes.Value) string {
	s := v.String()
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// collection builds a list, set or map of n elements.
func (v validator) collection(m mapping, typ tftypes.Type, n int) tftypes.Value {
	elem := elementType(typ)
	sample := func(i int) tftypes.Value {
		if elem.Is(tftypes.String) {
			s := m.Sample
			if s == "" {
				s = "e"
			}
			return tftypes.NewValue(tftypes.String, fmt.Sprintf("%s%d", s, i))
		}
		return nullObject(elem)
	}
	if typ.Is(tftypes.Map{}) {
		vals := map[string]tftypes.Value{}
		for i := range n {
			vals[fmt.Sprintf("k%d.example.org", i)] = sample(i)
		}
		return tftypes.NewValue(typ, vals)
	}
	vals := make([]tftypes.Value, 0, n)
	for i := range n {
		vals = append(vals, sample(i))
	}
	return tftypes.NewValue(typ, vals)
}

func nullObject(typ tftypes.Type) tftypes.Value {
	obj, ok := typ.(tftypes.Object)
	if !ok {
		return tftypes.NewValue(typ, nil)
	}
	vals := map[string]tftypes.Value{}
	for name, at := range obj.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	return tftypes.NewValue(typ, vals)
}

func (v validator) attrType(attr string) tftypes.Type {
	typ := v.typ
	for _, step := range strings.Split(attr, ".") {
		switch t := typ.(type) {
		case tftypes.Object:
			typ = t.AttributeTypes[step]
		default:
			typ = elementType(typ)
		}
	}
	return typ
}

// errorsAt validates a configuration where only attr is set (to val) and
// every object on its way is present, and returns the error diagnostics
// reported at attr itself.
func (v validator) errorsAt(attr string, val tftypes.Value) []string {
	steps := strings.Split(attr, ".")
	config := build(v.typ, steps, val)
	for attr, s := range v.context {
		config = set(config, strings.Split(attr, "."), tftypes.NewValue(tftypes.String, s))
	}
	dv, err := tfprotov6.NewDynamicValue(v.typ, config)
	if err != nil {
		v.t.Fatalf("building a config for %s: %v", attr, err)
	}
	resp, err := v.srv.ValidateResourceConfig(context.Background(), &tfprotov6.ValidateResourceConfigRequest{
		TypeName: v.typeName, Config: &dv,
	})
	if err != nil {
		v.t.Fatalf("ValidateResourceConfig: %v", err)
	}
	at := attributePath(v.typ, steps)
	var out []string
	for _, d := range resp.Diagnostics {
		if d.Severity == tfprotov6.DiagnosticSeverityError && d.Attribute != nil && d.Attribute.Equal(at) {
			out = append(out, d.Summary+": "+d.Detail)
		}
	}
	return out
}

const mapKey = "example.org"

func build(typ tftypes.Type, steps []string, leaf tftypes.Value) tftypes.Value {
	if len(steps) == 0 {
		return leaf
	}
	switch t := typ.(type) {
	case tftypes.Object:
		vals := map[string]tftypes.Value{}
		for name, at := range t.AttributeTypes {
			if name == steps[0] {
				vals[name] = build(at, steps[1:], leaf)
			} else {
				vals[name] = tftypes.NewValue(at, nil)
			}
		}
		return tftypes.NewValue(t, vals)
	case tftypes.Map:
		return tftypes.NewValue(t, map[string]tftypes.Value{mapKey: build(t.ElementType, steps[1:], leaf)})
	case tftypes.List:
		return tftypes.NewValue(t, []tftypes.Value{build(t.ElementType, steps[1:], leaf)})
	case tftypes.Set:
		return tftypes.NewValue(t, []tftypes.Value{build(t.ElementType, steps[1:], leaf)})
	}
	panic(fmt.Sprintf("cannot descend into %s", typ))
}

// set returns obj with the attribute at steps (objects only) set to leaf,
// creating the objects on the way.
func set(obj tftypes.Value, steps []string, leaf tftypes.Value) tftypes.Value {
	if len(steps) == 0 {
		return leaf
	}
	t, ok := obj.Type().(tftypes.Object)
	if !ok {
		panic(fmt.Sprintf("context attributes must be nested in objects only, not %s", obj.Type()))
	}
	if obj.IsNull() {
		obj = build(t, steps, leaf)
	}
	var vals map[string]tftypes.Value
	if err := obj.As(&vals); err != nil {
		panic(err)
	}
	vals[steps[0]] = set(vals[steps[0]], steps[1:], leaf)
	return tftypes.NewValue(t, vals)
}

func attributePath(typ tftypes.Type, steps []string) *tftypes.AttributePath {
	p := tftypes.NewAttributePath()
	for _, s := range steps {
		switch t := typ.(type) {
		case tftypes.Object:
			p = p.WithAttributeName(s)
			typ = t.AttributeTypes[s]
		case tftypes.Map:
			p = p.WithElementKeyString(mapKey)
			typ = t.ElementType
		case tftypes.List:
			p = p.WithElementKeyInt(0)
			typ = t.ElementType
		}
	}
	return p
}
