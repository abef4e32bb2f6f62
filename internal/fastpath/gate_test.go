package fastpath

import (
	"os"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVerifiedVersionsAreLinked fails when go.mod moves the framework or
// terraform-plugin-go away from the versions the fast path was verified
// against: then Enabled switches it off in every build. Re-run
// TestAccFederatedTrustDomainFastPath_sameAnswers (internal/resources) on the
// new versions, read their changelogs for plan/private-state changes, and
// update verified.
//
// A test binary carries no dependency versions (golang/go#33976), so the
// versions a build links are read from go.mod's require lines.
func TestVerifiedVersionsAreLinked(t *testing.T) {
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var deps []*debug.Module
	for _, line := range strings.Split(string(gomod), "\n") {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(fields) >= 2 && verified[fields[0]] != "" {
			deps = append(deps, &debug.Module{Path: fields[0], Version: fields[1]})
		}
		if len(fields) >= 2 && fields[0] == "replace" && verified[fields[1]] != "" {
			t.Fatalf("go.mod replaces %s (%q): the fast path is verified against released versions only", fields[1], line)
		}
	}
	if ok, why := versionsVerified(deps); !ok {
		t.Fatalf("go.mod links versions the fast path was not verified against, so every build switches it off: %s. "+
			"Run TestAccFederatedTrustDomainFastPath_sameAnswers on them, then update fastpath.verified.", why)
	}
	t.Setenv(EnvSwitch, "")
	if ok, why := Enabled(); !ok {
		t.Fatalf("Enabled() = false (%s), want true with the verified versions linked", why)
	}
}

func TestVersionGate(t *testing.T) {
	deps := func(framework, plugingo string) []*debug.Module {
		return []*debug.Module{
			{Path: "github.com/hashicorp/terraform-plugin-framework", Version: framework},
			{Path: "github.com/hashicorp/terraform-plugin-go", Version: plugingo},
			{Path: "example.com/other", Version: "v9.9.9"},
		}
	}
	for name, tc := range map[string]struct {
		deps []*debug.Module
		ok   bool
		why  string
	}{
		"verified":          {deps("v1.19.0", "v0.31.0"), true, ""},
		"newer framework":   {deps("v1.20.0", "v0.31.0"), false, "terraform-plugin-framework is v1.20.0, the fast path was verified against v1.19.0"},
		"older plugin-go":   {deps("v1.19.0", "v0.30.0"), false, "terraform-plugin-go is v0.30.0"},
		"pseudo version":    {deps("v1.19.1-0.20261201000000-abcdefabcdef", "v0.31.0"), false, "v1.19.1-0.2026"},
		"framework missing": {deps("v1.19.0", "v0.31.0")[1:], false, "terraform-plugin-framework is not linked"},
		"replaced": {[]*debug.Module{
			{Path: "github.com/hashicorp/terraform-plugin-framework", Version: "v1.19.0",
				Replace: &debug.Module{Path: "../fork", Version: ""}},
			{Path: "github.com/hashicorp/terraform-plugin-go", Version: "v0.31.0"},
		}, false, "terraform-plugin-framework is , the fast path"},
	} {
		t.Run(name, func(t *testing.T) {
			ok, why := versionsVerified(tc.deps)
			if ok != tc.ok || !strings.Contains(why, tc.why) {
				t.Errorf("versionsVerified = %v, %q; want %v and a reason containing %q", ok, why, tc.ok, tc.why)
			}
		})
	}
}

func TestEnvSwitch(t *testing.T) {
	for _, v := range []string{"off", "OFF", "0", "false", " no "} {
		t.Setenv(EnvSwitch, v)
		if ok, why := Enabled(); ok || !strings.Contains(why, EnvSwitch) {
			t.Errorf("%s=%q: Enabled() = %v, %q; want false naming the switch", EnvSwitch, v, ok, why)
		}
	}
	for _, v := range []string{"", "on", "1"} {
		t.Setenv(EnvSwitch, v)
		if ok, why := Enabled(); !ok {
			t.Errorf("%s=%q: Enabled() = false (%s), want true", EnvSwitch, v, why)
		}
	}
}
