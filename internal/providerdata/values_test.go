package providerdata

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestValues(t *testing.T) {
	if got := OptionalString(""); !got.IsNull() {
		t.Errorf(`OptionalString("") = %v, want null`, got)
	}
	if got := OptionalString("x"); got != types.StringValue("x") {
		t.Errorf(`OptionalString("x") = %v`, got)
	}
	for _, tc := range []struct {
		v    types.String
		want string
	}{
		{types.StringNull(), "def"},
		{types.StringUnknown(), "def"},
		{types.StringValue(""), "def"},
		{types.StringValue("set"), "set"},
	} {
		if got := StringOr(tc.v, "def"); got != tc.want {
			t.Errorf("StringOr(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	for _, tc := range []struct {
		cluster types.String
		want    string
	}{
		{types.StringNull(), "n"},
		{types.StringValue(""), "n"},
		{types.StringValue("east/prod"), "east/prod/n"},
	} {
		if got := ResourceID(tc.cluster, "n"); got != tc.want {
			t.Errorf("ResourceID(%v, n) = %q, want %q", tc.cluster, got, tc.want)
		}
	}
}
