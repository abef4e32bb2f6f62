// Package quantitytype is a Terraform string type for Kubernetes resource
// quantities ("500m", "1Gi") that compares by meaning: "1000m" and "1", or
// "1Gi" and "1024Mi", are the same value.
//
// Why: an operator that decodes an object into its Go type and writes it
// back re-serialises a resource.Quantity in canonical form. The
// cert-manager Operator does this with every IstioCSR it first sees
// (finalizer and annotation Updates), so "0.5" comes back as "500m" and
// "1024Mi" as "1Gi"; a plain string would make Terraform report an
// inconsistent result after apply, and a diff on every refresh after that.
//
// The type does not check the text: the attribute's validator
// (validate.Quantity) reports a quantity that does not parse at plan time.
// The framework runs a value type's own validation for a map's elements only
// when it converts the map into Go values, which a model of framework types
// never does.
package quantitytype

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/api/resource"
)

var (
	_ basetypes.StringTypable                    = Type{}
	_ basetypes.StringValuableWithSemanticEquals = Value{}
)

// Type is the attribute or element type (CustomType of a string attribute,
// ElementType of a map attribute).
type Type struct {
	basetypes.StringType
}

func (t Type) String() string { return "quantitytype.Type" }

// Equal is true for another Type only: a plain string type is not one.
func (t Type) Equal(o attr.Type) bool {
	other, ok := o.(Type)
	return ok && t.StringType.Equal(other.StringType)
}

func (t Type) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return Value{StringValue: in}, nil
}

func (t Type) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return Value{StringValue: s}, nil
}

func (t Type) ValueType(context.Context) attr.Value { return Value{} }

// Value is a quantity as the text it was written in.
type Value struct {
	basetypes.StringValue
}

// NewValue is a known quantity text.
func NewValue(s string) Value { return Value{StringValue: basetypes.NewStringValue(s)} }

// NewNull is a null quantity.
func NewNull() Value { return Value{StringValue: basetypes.NewStringNull()} }

// NewUnknown is a quantity known only after apply.
func NewUnknown() Value { return Value{StringValue: basetypes.NewStringUnknown()} }

func (v Value) Type(context.Context) attr.Type { return Type{} }

// Equal compares the text (as Terraform does); StringSemanticEquals
// compares the meaning.
func (v Value) Equal(o attr.Value) bool {
	other, ok := o.(Value)
	return ok && v.StringValue.Equal(other.StringValue)
}

// StringSemanticEquals is true when both texts parse as the same amount.
// Text that does not parse is equal only to the same text (the attribute's
// validator reports it).
func (v Value) StringSemanticEquals(_ context.Context, prior basetypes.StringValuable) (bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	p, ok := prior.(Value)
	if !ok {
		diags.AddError("Semantic Equality Check Error",
			fmt.Sprintf("Expected a quantitytype.Value, got %T. Please report this to the provider developers.", prior))
		return false, diags
	}
	return Same(v.ValueString(), p.ValueString()), diags
}

// Same reports whether two quantity texts mean the same amount
// (resource.Quantity Cmp). Text that does not parse is the same only as
// identical text.
func Same(a, b string) bool {
	if a == b {
		return true
	}
	qa, errA := resource.ParseQuantity(a)
	qb, errB := resource.ParseQuantity(b)
	return errA == nil && errB == nil && qa.Cmp(qb) == 0
}

// Map is a map of quantity texts by name, null for nil items.
func Map(items map[string]string) basetypes.MapValue {
	if items == nil {
		return basetypes.NewMapNull(Type{})
	}
	values := make(map[string]attr.Value, len(items))
	for name, text := range items {
		values[name] = NewValue(text)
	}
	return basetypes.NewMapValueMust(Type{}, values)
}
