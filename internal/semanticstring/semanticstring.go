// Package semanticstring is the shape shared by the provider's Terraform
// string types that compare by meaning (durationtype, quantitytype): a value
// keeps the text it was written in, Terraform compares that text, and the
// framework's semantic equality, asked after Read, Create and Update, keeps
// the prior text for a new text of the same meaning. A Kind says what the
// strings are and when two of them mean the same.
package semanticstring

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Kind is what the strings of one type are: an empty struct whose methods
// name the type's package and compare two texts by meaning.
type Kind interface {
	comparable
	// Package is the name of the package that declares the type, for
	// messages ("durationtype").
	Package() string
	// Same reports whether two texts mean the same value; text that does
	// not parse should be the same only as identical text.
	Same(a, b string) bool
}

// Type is the attribute or element type (CustomType of a string attribute,
// ElementType of a map attribute).
type Type[K Kind] struct {
	basetypes.StringType
}

func (t Type[K]) String() string {
	var k K
	return k.Package() + ".Type"
}

// Equal is true for a Type of the same Kind only: a plain string type is not
// one.
func (t Type[K]) Equal(o attr.Type) bool {
	other, ok := o.(Type[K])
	return ok && t.StringType.Equal(other.StringType)
}

func (t Type[K]) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return Value[K]{StringValue: in}, nil
}

func (t Type[K]) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return Value[K]{StringValue: s}, nil
}

func (t Type[K]) ValueType(context.Context) attr.Value { return Value[K]{} }

// Value is a string of Kind K as the text it was written in.
type Value[K Kind] struct {
	basetypes.StringValue
}

func (v Value[K]) Type(context.Context) attr.Type { return Type[K]{} }

// Equal compares the text (as Terraform does); StringSemanticEquals
// compares the meaning.
func (v Value[K]) Equal(o attr.Value) bool {
	other, ok := o.(Value[K])
	return ok && v.StringValue.Equal(other.StringValue)
}

// StringSemanticEquals is true when both texts mean the same (Kind's Same).
func (v Value[K]) StringSemanticEquals(_ context.Context, prior basetypes.StringValuable) (bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	var k K
	p, ok := prior.(Value[K])
	if !ok {
		diags.AddError("Semantic Equality Check Error",
			fmt.Sprintf("Expected a %s.Value, got %T. Please report this to the provider developers.", k.Package(), prior))
		return false, diags
	}
	return k.Same(v.ValueString(), p.ValueString()), diags
}
