package conventions_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// compatibilityPage is the guide whose matrix this file checks.
const compatibilityPage = "templates/guides/compatibility.md.tmpl"

// TestCompatibilityMatrixIsTested: the compatibility guide states the
// versions the repository pins (each tool's module in tools/, each
// operator's commit in pins.tsv), and every test it names as covering a row
// exists. A bumped pin or a renamed test fails here until the page follows.
func TestCompatibilityMatrixIsTested(t *testing.T) {
	root := repoRoot(t)
	page, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(compatibilityPage)))
	if err != nil {
		t.Fatal(err)
	}
	text := string(page)

	for tool, module := range map[string]string{
		"kube-apiserver": "k8s.io/kubernetes", "etcd": "go.etcd.io/etcd/server/v3",
		"spire-server": "github.com/spiffe/spire", "spire-controller-manager": "github.com/spiffe/spire-controller-manager",
		"terraform": "github.com/hashicorp/terraform", "terraform-1.11": "github.com/hashicorp/terraform",
		"tofu": "github.com/opentofu/opentofu",
	} {
		mod, err := os.ReadFile(filepath.Join(root, "tools", tool, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(module) + ` v(\S+)`).FindSubmatch(mod)
		if m == nil {
			t.Errorf("tools/%s/go.mod does not require %s", tool, module)
		} else if !strings.Contains(text, " "+string(m[1])) {
			t.Errorf("%s does not name %s %s, the version tools/%s pins", compatibilityPage, tool, m[1], tool)
		}
	}

	pins, err := os.ReadFile(filepath.Join(root, "internal", "testkit", "upstreamcrds", "pins.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(pins)) {
		fields := strings.Split(strings.TrimSpace(line), "\t")
		if strings.HasPrefix(line, "#") || len(fields) != 5 || fields[0] == "file" {
			continue
		}
		if !strings.Contains(text, "`"+fields[2]+"`") {
			t.Errorf("%s does not name the commit %s that pins.tsv pins %s at", compatibilityPage, fields[2], fields[1])
		}
	}

	tests := testFuncs(t, root)
	named := 0
	prefix := ""
	for _, m := range regexp.MustCompile("`(Test\\w+(?:_\\*)?|_\\w+)`").FindAllStringSubmatch(text, -1) {
		name := m[1]
		switch {
		case strings.HasPrefix(name, "Test"):
			prefix, _, _ = strings.Cut(name, "_")
		case prefix != "":
			name = prefix + name // `_drift` after `TestAccFederatedTrustDomain_twoClusters`
		default:
			continue
		}
		named++
		if stem, wild := strings.CutSuffix(name, "*"); wild {
			if !hasPrefixed(tests, stem) {
				t.Errorf("%s names %s, but no test starts with %s", compatibilityPage, name, stem)
			}
		} else if !tests[name] {
			t.Errorf("%s names the test %s, which does not exist", compatibilityPage, name)
		}
	}
	if named == 0 {
		t.Errorf("%s names no test", compatibilityPage)
	}
}

// testFuncs are the names of the repository's test functions.
func testFuncs(t *testing.T, root string) map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	out := map[string]bool{}
	walkRepo(t, root, func(rel string, src []byte) {
		if strings.HasSuffix(rel, "_test.go") {
			for _, m := range decl.FindAllSubmatch(src, -1) {
				out[string(m[1])] = true
			}
		}
	})
	return out
}

func hasPrefixed(names map[string]bool, prefix string) bool {
	for n := range names {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}
