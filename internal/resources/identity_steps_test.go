package resources_test

import (
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// wantIdentity is the identity checks of an object on cluster ("" for the
// provider's default connection, whose identity has a null cluster) with the
// other identity attributes given as name, value pairs.
func wantIdentity(cluster string, attrs ...string) map[string]knownvalue.Check {
	want := map[string]knownvalue.Check{"cluster": knownvalue.Null()}
	if cluster != "" {
		want["cluster"] = knownvalue.StringExact(cluster)
	}
	for i := 0; i+1 < len(attrs); i += 2 {
		want[attrs[i]] = knownvalue.StringExact(attrs[i+1])
	}
	return want
}

// identityImport is one row of an identity-import test: a resource of the
// configuration, the identity its create stores, the attributes whose state
// values the identity must equal, and whether the configuration Terraform
// generates from an import by that identity is tried too.
type identityImport struct {
	addr         string
	identity     map[string]knownvalue.Check
	matchesState []string
	generate     bool
}

// identityImportSteps are the steps of an identity-import test (Terraform >=
// 1.12): apply config and check each row's stored identity; import each row
// by that identity (an import block with `identity`, whose import must plan
// no change); then, for the rows that ask, import once more with the
// configuration `terraform plan -generate-config-out` writes.
func identityImportSteps(config string, rows ...identityImport) []resource.TestStep {
	var checks []statecheck.StateCheck
	for _, r := range rows {
		checks = append(checks, statecheck.ExpectIdentity(r.addr, r.identity))
		for _, attr := range r.matchesState {
			checks = append(checks, statecheck.ExpectIdentityValueMatchesState(r.addr, tfjsonpath.New(attr)))
		}
	}
	steps := []resource.TestStep{{Config: config, ConfigStateChecks: checks}}
	importStep := func(addr string, generate bool) resource.TestStep {
		return resource.TestStep{
			Config:          config,
			ResourceName:    addr,
			ImportState:     true,
			ImportStateKind: resource.ImportBlockWithResourceIdentity,
			GenerateConfig:  generate,
		}
	}
	for _, r := range rows {
		steps = append(steps, importStep(r.addr, false))
	}
	for _, r := range rows {
		if r.generate {
			steps = append(steps, importStep(r.addr, true))
		}
	}
	return steps
}
