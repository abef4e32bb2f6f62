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
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/semanticstring"
)

var _ basetypes.StringValuableWithSemanticEquals = Value{}

// duration is the Kind of the type: Go duration texts.
type duration struct{}

func (duration) Package() string       { return "durationtype" }
func (duration) Same(a, b string) bool { return Same(a, b) }

// Type is the attribute type (schema.StringAttribute.CustomType).
type Type = semanticstring.Type[duration]

// Value is a duration as the text it was written in.
type Value = semanticstring.Value[duration]

// NewValue is a known duration text.
func NewValue(s string) Value { return Value{StringValue: basetypes.NewStringValue(s)} }

// NewNull is a null duration.
func NewNull() Value { return Value{StringValue: basetypes.NewStringNull()} }

// NewUnknown is a duration known only after apply.
func NewUnknown() Value { return Value{StringValue: basetypes.NewStringUnknown()} }

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
