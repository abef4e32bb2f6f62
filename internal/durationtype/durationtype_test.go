package durationtype

import (
	"context"
	"testing"
)

func TestSame(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"1h", "1h0m0s", true},
		{"30m", "30m0s", true},
		{"90m", "1h30m0s", true},
		{"1h", "60m", true},
		{"3600s", "1h0m0s", true},
		{"1h", "2h", false},
		{"1h", "1h0m1s", false},
		{"1d", "1d", true},   // same text, even when it does not parse
		{"1d", "24h", false}, // text that does not parse equals nothing else
		{"", "0s", false},
	} {
		if got := Same(c.a, c.b); got != c.want {
			t.Errorf("Same(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// The type is semanticstring's with this package's Same.
func TestStringSemanticEquals(t *testing.T) {
	ctx := context.Background()
	eq, diags := NewValue("1h0m0s").StringSemanticEquals(ctx, NewValue("1h"))
	if diags.HasError() || !eq {
		t.Errorf("1h0m0s vs prior 1h: equal = %v, diags %v; want equal", eq, diags)
	}
	if (Type{}).String() != "durationtype.Type" || !NewNull().IsNull() || !NewUnknown().IsUnknown() {
		t.Error("want the durationtype type, null and unknown values")
	}
}
