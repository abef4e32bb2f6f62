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
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/semanticstring"
)

var _ basetypes.StringValuableWithSemanticEquals = Value{}

// quantity is the Kind of the type: Kubernetes resource quantity texts.
type quantity struct{}

func (quantity) Package() string       { return "quantitytype" }
func (quantity) Same(a, b string) bool { return Same(a, b) }

// Type is the attribute or element type (CustomType of a string attribute,
// ElementType of a map attribute).
type Type = semanticstring.Type[quantity]

// Value is a quantity as the text it was written in.
type Value = semanticstring.Value[quantity]

// NewValue is a known quantity text.
func NewValue(s string) Value { return Value{StringValue: basetypes.NewStringValue(s)} }

// NewNull is a null quantity.
func NewNull() Value { return Value{StringValue: basetypes.NewStringNull()} }

// NewUnknown is a quantity known only after apply.
func NewUnknown() Value { return Value{StringValue: basetypes.NewStringUnknown()} }

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
