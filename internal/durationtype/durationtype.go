// Package durationtype is a Terraform string type for Go durations ("1h",
// "90m") that compares by meaning: "1h" and "1h0m0s" are the same value.
//
// Why: an operator that decodes an object into its Go type and writes it
// back re-serialises a metav1.Duration in time.Duration.String() form. The
// cert-manager Operator does this with every IstioCSR it first sees
// (finalizer and annotation Updates), so "1h" comes back as "1h0m0s"; a
// plain string would make Terraform report an inconsistent result after
// apply, and a diff on every refresh after that.
package durationtype

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

var (
	_ basetypes.StringTypable                    = Type{}
	_ basetypes.StringValuableWithSemanticEquals = Value{}
)

// Type is the attribute type (schema.StringAttribute.CustomType).
type Type struct {
	basetypes.StringType
}

func (t Type) String() string { return "durationtype.Type" }

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

// Value is a duration as the text it was written in.
type Value struct {
	basetypes.StringValue
}

// NewValue is a known duration text.
func NewValue(s string) Value { return Value{StringValue: basetypes.NewStringValue(s)} }

// NewNull is a null duration.
func NewNull() Value { return Value{StringValue: basetypes.NewStringNull()} }

// NewUnknown is a duration known only after apply.
func NewUnknown() Value { return Value{StringValue: basetypes.NewStringUnknown()} }

func (v Value) Type(context.Context) attr.Type { return Type{} }

// Equal compares the text (as Terraform does); StringSemanticEquals
// compares the meaning.
func (v Value) Equal(o attr.Value) bool {
	other, ok := o.(Value)
	return ok && v.StringValue.Equal(other.StringValue)
}

// StringSemanticEquals is true when both texts parse as the same duration.
// Text that does not parse is equal only to the same text (the attribute's
// validator reports it).
func (v Value) StringSemanticEquals(_ context.Context, prior basetypes.StringValuable) (bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	p, ok := prior.(Value)
	if !ok {
		diags.AddError("Semantic Equality Check Error",
			fmt.Sprintf("Expected a durationtype.Value, got %T. Please report this to the provider developers.", prior))
		return false, diags
	}
	return Same(v.ValueString(), p.ValueString()), diags
}

// Same reports whether two duration texts mean the same duration. Text
// that does not parse is the same only as identical text.
func Same(a, b string) bool {
	if a == b {
		return true
	}
	da, errA := time.ParseDuration(a)
	db, errB := time.ParseDuration(b)
	return errA == nil && errB == nil && da == db
}
