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

// verified are the module versions whose unexported behaviour the fast path
// (and its Codec, which it shares its encodings with) was checked
// against by TestAccFederatedTrustDomainFastPath_sameAnswers: the order in
// which terraform-plugin-framework v1.19 runs defaults, attribute plan
// modifiers and ModifyPlan (fwserver/server_planresourcechange.go), its
// private state encoding (internal/privatestate), and the request and
// response shapes of terraform-plugin-go v0.31. Another version of either
// may differ in any of these without a compile error, so any other version
// switches the fast path off until the comparison test has passed on it and
// this table is updated (TestVerifiedVersionsAreLinked fails meanwhile).
var verified = map[string]string{
	"github.com/hashicorp/terraform-plugin-framework": "v1.19.0",
	"github.com/hashicorp/terraform-plugin-go":        "v0.31.0",
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

// versionsVerified checks the linked versions of the modules in verified; a
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
	for module, want := range verified {
		got, found := linked[module]
		if !found {
			return false, fmt.Sprintf("%s is not linked", module)
		}
		if got != want {
			return false, fmt.Sprintf("%s is %s, the fast path was verified against %s", module, got, want)
		}
	}
	return true, ""
}
