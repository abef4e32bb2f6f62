package fastpath

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Codec moves a resource's model struct (framework value types in fields
// tagged `tfsdk`) in and out of the raw Terraform value of its state, plan
// or config, for the hot paths of a plan (Read and ModifyPlan of every
// instance), where For uses it.
//
// The framework's State.Get/Set reflect over the whole struct on every call
// and, in terraform-plugin-framework v1.19, compile a regular expression per
// field per call (internal/reflect.isValidFieldName,
// hashicorp/terraform-plugin-framework#725), a measurable share of a large
// plan's provider CPU (bench/ANALYSIS.md). The codec can go once a
// framework release compiles that expression once. It uses only the
// framework's public value API, so unlike the protocol answers of For it
// needs no version gate: For's framework methods (Read, ModifyPlan,
// ValidateConfig) use it whatever the gate says. A Codec resolves the
// struct's fields against the schema once; each call then only converts the
// top-level attributes with their own attr.Type (ValueFromTerraform /
// ToTerraformValue), which is also what the framework ends up doing per
// attribute. Nested objects stay types.Object values and are read with their
// own As where needed.
//
// A Codec converts between T and the raw value of an object type whose
// attributes are T's tfsdk-tagged fields, those of its embedded structs
// included (as the framework reads them: a model may embed a mapping it
// shares with a data source).
type Codec[T any] struct {
	typ    tftypes.Object
	fields []codecField
}

type codecField struct {
	name  string
	index []int
	typ   attr.Type
	goTyp reflect.Type
	// null is typ's value of a null, converted once: most of a state's
	// optional attributes are null, and converting one anew (an object
	// type builds its whole Terraform type to compare with) was a tenth
	// of what a plan allocated.
	null reflect.Value
}

var attrValueType = reflect.TypeFor[attr.Value]()

// NewCodec builds the codec of T for the object type of a schema (its Type()).
// It panics when T and the schema disagree, which is a programming error
// that every test of the resource would hit at once.
func NewCodec[T any](ctx context.Context, schemaType attr.Type) *Codec[T] {
	objType, ok := schemaType.(basetypes.ObjectType)
	if !ok {
		panic(fmt.Sprintf("fastpath codec: schema type %T is not an object type", schemaType))
	}
	rt := reflect.TypeFor[T]()
	if rt.Kind() != reflect.Struct {
		panic(fmt.Sprintf("fastpath codec: %s is not a struct", rt))
	}
	tfType, ok := objType.TerraformType(ctx).(tftypes.Object)
	if !ok {
		panic(fmt.Sprintf("fastpath codec: %s is not a Terraform object type", objType))
	}
	c := &Codec[T]{typ: tfType}
	seen := map[string]bool{}
	c.addFields(rt, nil, objType, seen)
	for name := range objType.AttrTypes {
		if !seen[name] {
			panic(fmt.Sprintf("fastpath codec: %s has no field for attribute %q", rt, name))
		}
	}
	return c
}

// addFields adds the tfsdk-tagged fields of rt, which lies at index in T,
// and those of the structs it embeds.
func (c *Codec[T]) addFields(rt reflect.Type, index []int, objType basetypes.ObjectType, seen map[string]bool) {
	for i := range rt.NumField() {
		f := rt.Field(i)
		at := append(slices.Clone(index), i)
		name := f.Tag.Get("tfsdk")
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			c.addFields(f.Type, at, objType, seen)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		typ, ok := objType.AttrTypes[name]
		if !ok {
			panic(fmt.Sprintf("fastpath codec: %s.%s: the schema has no attribute %q", rt, f.Name, name))
		}
		if !f.Type.Implements(attrValueType) {
			panic(fmt.Sprintf("fastpath codec: %s.%s: %s is not a framework value type", rt, f.Name, f.Type))
		}
		if seen[name] {
			panic(fmt.Sprintf("fastpath codec: %s.%s: attribute %q has two fields", rt, f.Name, name))
		}
		seen[name] = true
		field := codecField{name: name, index: at, typ: typ, goTyp: f.Type}
		if null, err := typ.ValueFromTerraform(context.Background(), tftypes.NewValue(typ.TerraformType(context.Background()), nil)); err == nil {
			if v := reflect.ValueOf(null); v.Type().AssignableTo(f.Type) {
				field.null = v
			}
		}
		c.fields = append(c.fields, field)
	}
}

// Get fills dst from raw, a known, non-null value of the codec's type.
func (c *Codec[T]) Get(ctx context.Context, raw tftypes.Value, dst *T) diag.Diagnostics {
	var diags diag.Diagnostics
	var vals map[string]tftypes.Value
	if !raw.IsKnown() || raw.IsNull() {
		diags.AddError("Provider Error", "fastpath codec: reading a null or unknown object into a model; please report this to the provider developers.")
		return diags
	}
	if err := raw.As(&vals); err != nil {
		diags.AddError("Provider Error", "fastpath codec: "+err.Error())
		return diags
	}
	rv := reflect.ValueOf(dst).Elem()
	for _, f := range c.fields {
		if raw, ok := vals[f.name]; ok && f.null.IsValid() && raw.IsNull() {
			rv.FieldByIndex(f.index).Set(f.null)
			continue
		}
		v, err := f.typ.ValueFromTerraform(ctx, vals[f.name])
		if err != nil {
			diags.AddError("Provider Error", fmt.Sprintf("fastpath codec: attribute %q: %v", f.name, err))
			continue
		}
		value := reflect.ValueOf(v)
		if !value.Type().AssignableTo(f.goTyp) {
			diags.AddError("Provider Error", fmt.Sprintf("fastpath codec: attribute %q: %s is not assignable to %s", f.name, value.Type(), f.goTyp))
			continue
		}
		rv.FieldByIndex(f.index).Set(value)
	}
	return diags
}

// Value is the raw value of src.
func (c *Codec[T]) Value(ctx context.Context, src *T) (tftypes.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	rv := reflect.ValueOf(src).Elem()
	vals := make(map[string]tftypes.Value, len(c.fields))
	for _, f := range c.fields {
		av, _ := rv.FieldByIndex(f.index).Interface().(attr.Value) // checked in New
		v, err := av.ToTerraformValue(ctx)
		if err != nil {
			diags.AddError("Provider Error", fmt.Sprintf("fastpath codec: attribute %q: %v", f.name, err))
			continue
		}
		vals[f.name] = v
	}
	if diags.HasError() {
		return tftypes.Value{}, diags
	}
	if err := tftypes.ValidateValue(c.typ, vals); err != nil {
		diags.AddError("Provider Error", "fastpath codec: "+err.Error())
		return tftypes.Value{}, diags
	}
	return tftypes.NewValue(c.typ, vals), diags
}

// Equal reports whether a and b hold equal values in every field the codec
// moves, so that Value would encode them alike.
func (c *Codec[T]) Equal(a, b *T) bool {
	ra, rb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for _, f := range c.fields {
		av, _ := ra.FieldByIndex(f.index).Interface().(attr.Value) // checked in New
		bv, _ := rb.FieldByIndex(f.index).Interface().(attr.Value)
		if av == nil || bv == nil || !av.Equal(bv) {
			return false
		}
	}
	return true
}
