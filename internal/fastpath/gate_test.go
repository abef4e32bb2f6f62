package fastpath

import (
	"os"
	"path"
	"runtime/debug"
	"strings"
	"testing"
)

// linkedByGoMod is what go.mod requires of each piece's module. A test
// binary carries no dependency versions (golang/go#33976), so the versions
// a build links are read from go.mod's require lines.
func linkedByGoMod(t *testing.T) map[string]string {
	t.Helper()
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	modules := map[string]bool{}
	for _, p := range pieces {
		modules[p.Module] = true
	}
	linked := map[string]string{}
	for _, line := range strings.Split(string(gomod), "\n") {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(fields) >= 2 && modules[fields[0]] {
			linked[fields[0]] = fields[1]
		}
		if len(fields) >= 2 && fields[0] == "replace" && modules[fields[1]] {
			t.Fatalf("go.mod replaces %s (%q): the fast path is verified against released versions only", fields[1], line)
		}
	}
	return linked
}

// TestPiecesMatchTheLinkedVersions fails, for each piece that answers as an
// upstream module's unexported code does, when go.mod moves that module away
// from the version the piece was verified against: every build then switches
// the fast path off, silently. The failure names what to compare in the new
// version; after that, run the fast-path comparison tests and move the
// piece's Version.
func TestPiecesMatchTheLinkedVersions(t *testing.T) {
	linked := linkedByGoMod(t)
	for _, p := range pieces {
		t.Run(p.File+" "+path.Base(p.Module), func(t *testing.T) {
			got := linked[p.Module]
			if got != p.Version {
				t.Fatalf("go.mod requires %s %s, but %s was verified against %s, so every build switches the fast path off. "+
					"Re-verify against the new version: %s. Then run the fast-path comparison tests "+
					"(go test -run 'FastPath_sameAnswers' ./internal/resources/) and set its Version in fastpath.pieces to %s.",
					p.Module, got, p.File, p.Version, p.Reverify, got)
			}
		})
	}
	t.Setenv(EnvSwitch, "")
	if ok, why := Enabled(); !ok {
		t.Fatalf("Enabled() = false (%s), want true with the verified versions linked", why)
	}
}

// TestPiecesAgreeOnVersions: two pieces of one module verified against
// different versions cannot both hold in one build.
func TestPiecesAgreeOnVersions(t *testing.T) {
	seen := map[string]piece{}
	for _, p := range pieces {
		if q, ok := seen[p.Module]; ok && q.Version != p.Version {
			t.Errorf("%s was verified against %s %s, %s against %s", q.File, p.Module, q.Version, p.File, p.Version)
		}
		seen[p.Module] = p
		if _, err := os.Stat(p.File); err != nil {
			t.Errorf("piece %s: %v", p.File, err)
		}
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
		"newer framework":   {deps("v1.20.0", "v0.31.0"), false, "terraform-plugin-framework is v1.20.0, the fast path (shortcut.go) was verified against v1.19.0"},
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
