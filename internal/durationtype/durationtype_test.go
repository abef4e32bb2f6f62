package durationtype

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
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

func TestStringSemanticEquals(t *testing.T) {
	ctx := context.Background()
	eq, diags := NewValue("1h0m0s").StringSemanticEquals(ctx, NewValue("1h"))
	if diags.HasError() || !eq {
		t.Errorf("1h0m0s vs prior 1h: equal = %v, diags %v; want equal", eq, diags)
	}
	eq, diags = NewValue("2h").StringSemanticEquals(ctx, NewValue("1h"))
	if diags.HasError() || eq {
		t.Errorf("2h vs prior 1h: equal = %v, diags %v; want different", eq, diags)
	}
	if _, diags := NewValue("1h").StringSemanticEquals(ctx, basetypes.NewStringValue("1h")); !diags.HasError() {
		t.Error("a plain string as prior value: want an error diagnostic")
	}
}

func TestTypeRoundTrip(t *testing.T) {
	ctx := context.Background()
	v, err := Type{}.ValueFromTerraform(ctx, tftypes.NewValue(tftypes.String, "30m"))
	if err != nil {
		t.Fatal(err)
	}
	d, ok := v.(Value)
	if !ok || d.ValueString() != "30m" {
		t.Fatalf("ValueFromTerraform = %#v, want Value 30m", v)
	}
	if !d.Type(ctx).Equal(Type{}) || (Type{}).Equal(basetypes.StringType{}) {
		t.Error("Type equality: want Type equal to itself only")
	}
	if d.Equal(NewValue("30m0s")) || !d.Equal(NewValue("30m")) {
		t.Error("Equal compares the text")
	}
	null, err := Type{}.ValueFromTerraform(ctx, tftypes.NewValue(tftypes.String, nil))
	if err != nil || !null.IsNull() {
		t.Errorf("null: %v, %v", null, err)
	}
}
