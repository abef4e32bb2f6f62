package quantitytype

import (
	"context"
	"testing"
)

func TestSame(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"0.5", "500m", true},
		{"1000m", "1", true},
		{"1024Mi", "1Gi", true},
		{"1Gi", "1073741824", true},
		{"1k", "1000", true},
		{"1", "2", false},
		{"1Gi", "1G", false},   // binary and decimal suffixes differ
		{"64MB", "64MB", true}, // same text, even when it does not parse
		{"64MB", "64M", false}, // text that does not parse equals nothing else
		{"", "0", false},
	} {
		if got := Same(c.a, c.b); got != c.want {
			t.Errorf("Same(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// The type is semanticstring's with this package's Same.
func TestStringSemanticEquals(t *testing.T) {
	ctx := context.Background()
	eq, diags := NewValue("1").StringSemanticEquals(ctx, NewValue("1000m"))
	if diags.HasError() || !eq {
		t.Errorf("1 vs prior 1000m: equal = %v, diags %v; want equal", eq, diags)
	}
	eq, diags = NewValue("2").StringSemanticEquals(ctx, NewValue("1"))
	if diags.HasError() || eq {
		t.Errorf("2 vs prior 1: equal = %v, diags %v; want different", eq, diags)
	}
	if (Type{}).String() != "quantitytype.Type" || !NewNull().IsNull() || !NewUnknown().IsUnknown() {
		t.Error("want the quantitytype type, null and unknown values")
	}
}

func TestMap(t *testing.T) {
	ctx := context.Background()
	if m := Map(nil); !m.IsNull() || !m.ElementType(ctx).Equal(Type{}) {
		t.Errorf("Map(nil) = %v, want a null map of quantities", m)
	}
	m := Map(map[string]string{"cpu": "500m", "memory": "1Gi"})
	if !m.ElementType(ctx).Equal(Type{}) || len(m.Elements()) != 2 {
		t.Fatalf("Map = %v, want two quantities", m)
	}
	if cpu, ok := m.Elements()["cpu"].(Value); !ok || cpu.ValueString() != "500m" {
		t.Errorf("cpu = %#v, want the Value 500m", m.Elements()["cpu"])
	}
}
