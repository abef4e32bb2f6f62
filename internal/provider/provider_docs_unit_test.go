package provider

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// TestProviderExampleShowsTheDefaults: the provider example on the registry's
// index page (examples/provider/provider.tf) writes the defaults out, so each
// value it writes is the one the provider uses when the attribute is unset;
// a default changed in the code fails here until the example follows.
func TestProviderExampleShowsTheDefaults(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "provider", "provider.tf"))
	if err != nil {
		t.Fatal(err)
	}
	file, diags := hclsyntax.ParseConfig(src, "provider.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	body, ok := file.Body.(*hclsyntax.Body)
	if !ok || len(body.Blocks) != 1 || body.Blocks[0].Type != "provider" {
		t.Fatal("examples/provider/provider.tf: want one provider block")
	}
	attrs := body.Blocks[0].Body.Attributes
	value := func(name string) cty.Value {
		a, found := attrs[name]
		if !found {
			t.Errorf("the example does not write %s", name)
			return cty.NilVal
		}
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			t.Fatalf("%s: %v", name, diags)
		}
		return v
	}
	for name, want := range map[string]cty.Value{
		"field_manager":  cty.StringVal(defaultFieldManager),
		"qps":            cty.NumberIntVal(defaultQPS),
		"burst":          cty.NumberIntVal(defaultBurst),
		"on_unreachable": cty.StringVal(providerdata.OnUnreachableWarn),
	} {
		if got := value(name); got != cty.NilVal && !got.RawEquals(want) {
			t.Errorf("the example writes %s = %s, but the default is %s", name, got.GoString(), want.GoString())
		}
	}
	spire := value("spire")
	if spire == cty.NilVal {
		return
	}
	for name, want := range map[string]string{
		"install":    providerdata.SpireInstallOperator,
		"namespace":  providerdata.OperatorSpireNamespace,
		"class_name": providerdata.OperatorSpireClassName,
	} {
		if !spire.Type().HasAttribute(name) {
			t.Errorf("the example's spire does not write %s", name)
		} else if got := spire.GetAttr(name); !got.RawEquals(cty.StringVal(want)) {
			t.Errorf("the example writes spire.%s = %s, but the default is %q", name, got.GoString(), want)
		}
	}
}
