package fastpath

import (
	"fmt"
	"os"
	"runtime/debug"
	"strings"
)

// EnvSwitch names the environment variable that turns every fast path off:
// ZEROTRUST_FASTPATH=off (or 0, false) sends each request to the framework.
// It is the operator's escape hatch should a fast answer ever differ from the
// framework's in the field; bench/ uses it to measure both ways in one run.
const EnvSwitch = "ZEROTRUST_FASTPATH"

// piece is a part of this package that answers as an upstream module's
// unexported code does, so that nothing but a test can tell when that code
// changes: the file, the module and version whose behaviour it was checked
// against, and what to compare again in a new version before moving Version.
type piece struct {
	File, Module, Version, Reverify string
}

const (
	framework = "github.com/hashicorp/terraform-plugin-framework"
	pluginGo  = "github.com/hashicorp/terraform-plugin-go"
)

// pieces are every such part. A build linking another version of a piece's
// module switches every fast path off (Enabled), and
// TestPiecesMatchTheLinkedVersions fails, naming what to re-verify. After
// re-verifying, run the fast-path comparison tests (internal/resources,
// *FastPath_sameAnswers, which compare every fast answer with the
// framework's on a real API server) and move Version.
var pieces = []piece{
	{"shortcut.go", framework, "v1.19.0", "fwserver/server_planresourcechange.go: the order of defaults, attribute " +
		"plan modifiers and ModifyPlan on a plan whose proposed state equals the prior state, and which schema " +
		"features (defaults, plan modifiers, semantic equality, write-only) can change such a plan"},
	{"validate.go", framework, "v1.19.0", "fwserver/schema_validation.go, attribute_validation.go and " +
		"block_validation.go: the order and requests of ValidateResourceConfig's checks (read-only, required, " +
		"validators, nested attributes, single nested blocks)"},
	{"private.go", framework, "v1.19.0", "internal/privatestate/data.go: the encoding of private state (a JSON " +
		"object of base64 JSON documents, framework keys beginning with \".\")"},
	{"upgrade.go", framework, "v1.19.0", "fwserver/server_upgraderesourcestate.go: a state of the schema's own " +
		"version is decoded, ignoring attributes the schema no longer has, and encoded again, nothing else"},
	{"for.go", framework, "v1.19.0", "fwserver/server_readresource.go and server_planresourcechange.go: what the " +
		"framework answers to an unchanged refresh and plan (state, private state, identity, semantic equality)"},
	{"json.go", pluginGo, "v0.31.0", "tftypes/value_json.go: ValueFromJSONWithOpts with IgnoreUndefinedAttributes " +
		"(tokens accepted, numbers, null handling, invalid UTF-8)"},
	{"for.go", pluginGo, "v0.31.0", "tfprotov6's request and response types of ValidateResourceConfig, " +
		"UpgradeResourceState, ReadResource and PlanResourceChange: every field a fast answer must carry"},
}

// Enabled reports whether fast paths may answer, and why not when they may
// not: switched off by EnvSwitch, or linked against module versions other
// than the verified ones.
func Enabled() (bool, string) {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvSwitch))) {
	case "off", "0", "false", "no":
		return false, EnvSwitch + " turns the fast path off"
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false, "the binary carries no module versions to check"
	}
	if len(info.Deps) == 0 {
		// go test binaries carry no dependency versions
		// (golang/go#33976); there the versions are go.mod's, which
		// TestVerifiedVersionsAreLinked checks, and the comparison test
		// runs the fast path against the framework itself.
		return true, ""
	}
	return versionsVerified(info.Deps)
}

// versionsVerified checks the linked version of every piece's module; a
// replaced module counts by its replacement's version.
func versionsVerified(deps []*debug.Module) (bool, string) {
	linked := map[string]string{}
	for _, m := range deps {
		if m.Replace != nil {
			linked[m.Path] = m.Replace.Version
			continue
		}
		linked[m.Path] = m.Version
	}
	for _, p := range pieces {
		got, found := linked[p.Module]
		if !found {
			return false, fmt.Sprintf("%s is not linked", p.Module)
		}
		if got != p.Version {
			return false, fmt.Sprintf("%s is %s, the fast path (%s) was verified against %s", p.Module, got, p.File, p.Version)
		}
	}
	return true, ""
}
