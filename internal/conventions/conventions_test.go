package conventions_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// outsideReference is one kind of pointer to text a reader of the
// repository does not have.
type outsideReference struct {
	kind string
	re   *regexp.Regexp
	// allowed, when set, accepts a match that is a fact, not a pointer.
	allowed func(match string) bool
	// instead says what to write.
	instead string
}

var outsideReferences = []outsideReference{
	{
		// The planning notes named their operator rows and findings by a
		// letter (Z, I, A) and a number; nothing else here is spelled so but
		// a command's flag (unzip -Z1).
		kind:    "planning row ID",
		re:      regexp.MustCompile(`(?:^|[^\w-])[ZIA][0-9]{1,2}\b`),
		instead: "state the rule, or name its section of docs/guides/operator-contracts.md",
	},
	{
		kind: "planning document",
		re:   regexp.MustCompile(`\b(?:OPERATORS|DESIGN|HARNESS|STYLE)\.md\b|operator-traces|\.\./shared/[\w.-]*`),
		// The harness reads the operators' released CRDs from the
		// upstream-crds directory beside the clone: an input, not a note.
		allowed: func(m string) bool { return m == "../shared/upstream-crds" },
		instead: "state the fact the note holds",
	},
	{
		kind: "issue number",
		// A number with no repository ("issue" or "PR" and a number, or a
		// bare hash and number). An upstream one named with its repository
		// (owner/name#number) is a public source.
		re:      regexp.MustCompile(`(?i)\b(?:issues?|PR|pull request)\s*#?[0-9]+\b|(?:^|[^\w/.&#-])#[0-9]+\b`),
		instead: "state what the issue decided, or name an upstream issue as owner/name#number",
	},
	{
		kind:    "seed reference",
		re:      regexp.MustCompile(`(?i)\bseeds?\s*#?[0-9]+\b|\bseed's\b`),
		instead: "name the design the seed is (for example Kuadrant's custom-domain design) and what it says",
	},
	{
		kind:    "numbered style habit",
		re:      regexp.MustCompile(`(?i)\bhabit\s*#?[0-9]+\b`),
		instead: "say what the habit asks for",
	},
	{
		kind:    "machine path",
		re:      regexp.MustCompile(`(?:^|[^\w.~/-])/(?:work|root|home/[A-Za-z_][\w.-]*|Users/[\w.-]+)/`),
		instead: "a path relative to the repository, or a name the reader can resolve",
	},
}

// proseExtensions are the text files read whole; Go files are read for
// their comments only (string literals are test data or render into docs/,
// which is read whole).
var proseExtensions = []string{".md", ".tmpl", ".sh", ".tf", ".tfvars", ".hcl", ".yaml", ".yml", ".txt"}

// TestProseIsSelfContained: no comment or document of the repository points
// outside it (see the package comment); each finding names its file, line
// and what to write instead.
func TestProseIsSelfContained(t *testing.T) {
	root := repoRoot(t)
	files := 0
	walkRepo(t, root, func(rel string, src []byte) {
		var texts []lineText
		switch ext := filepath.Ext(rel); {
		case ext == ".go":
			texts = goComments(src)
		case slices.Contains(proseExtensions, ext), filepath.Base(rel) == "GNUmakefile":
			for i, line := range strings.Split(string(src), "\n") {
				texts = append(texts, lineText{i + 1, line})
			}
		default:
			return
		}
		files++
		for _, lt := range texts {
			for _, ref := range outsideReferences {
				for _, m := range ref.re.FindAllString(lt.text, -1) {
					m = strings.TrimLeft(m, " \t(\"'`*[,;:")
					if ref.allowed != nil && ref.allowed(m) {
						continue
					}
					t.Errorf("%s:%d: %s %q: %s", rel, lt.line, ref.kind, m, ref.instead)
				}
			}
		}
	})
	if files < 100 {
		t.Fatalf("read only %d files under %s: the walk missed the repository", files, root)
	}
}

// TestOutsideReferencePatterns pins down what the patterns catch and what
// they leave alone.
func TestOutsideReferencePatterns(t *testing.T) {
	flagged := []string{
		"the operator's Route delay (Z9)", "rows I1..I11", "retries forever (findings A8)",
		"see OPERATORS.md", "(operator-traces, 1 to 5 s)", "read ../shared/STYLE.md",
		"the suite (issue 7)", "Issue #24", "see #24", "PR #1315", "(seed 003)", "the seed's flow",
		"Leashes (STYLE.md habit 14)", "habit 14", "(/work/shared/upstream-crds)", "/home/alice/src",
	}
	clean := []string{
		"HTTP 429 and 404", "CRD v1alpha1 and v1", "hashicorp/terraform-plugin-framework#1314",
		"spiffe/helm-charts-hardened#335", "golang/go#33976", "(#nestedatt--spec)", "&#39;",
		"the apply seeds SPIRE again", "spire-controller-manager never re-seeds it", "/tmp/zta-1/agent.sock",
		"~/.cache/terraform-provider-zerotrust", "shared/upstream-crds beside the repository",
		"../shared/upstream-crds", "ZT_UPSTREAM_CRDS", "A record", "sha256:4A2B", "issuer 2",
		"the issue's certificate", "IstioCSR I/O", "x509", "S3 bucket", "AZ1", "unzip -Z1 x.zip",
	}
	findings := func(s string) []string {
		var out []string
		for _, ref := range outsideReferences {
			for _, m := range ref.re.FindAllString(s, -1) {
				m = strings.TrimLeft(m, " \t(\"'`*[,;:")
				if ref.allowed == nil || !ref.allowed(m) {
					out = append(out, ref.kind+" "+m)
				}
			}
		}
		return out
	}
	for _, s := range flagged {
		if len(findings(s)) == 0 {
			t.Errorf("%q: not flagged", s)
		}
	}
	for _, s := range clean {
		if f := findings(s); len(f) > 0 {
			t.Errorf("%q: flagged %v", s, f)
		}
	}
}

// TestTestFileNames: the suffix of a test file matches the kind of tests it
// holds (see the package comment).
func TestTestFileNames(t *testing.T) {
	root := repoRoot(t)
	type testFile struct {
		rel       string
		acc, unit bool
	}
	byDir := map[string][]testFile{}
	walkRepo(t, root, func(rel string, src []byte) {
		if !strings.HasSuffix(rel, "_test.go") {
			return
		}
		f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return
		}
		tf := testFile{rel: rel}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
				continue
			}
			if strings.HasPrefix(fn.Name.Name, "TestAcc") {
				tf.acc = true
			} else {
				tf.unit = true
			}
		}
		byDir[filepath.Dir(rel)] = append(byDir[filepath.Dir(rel)], tf)
	})
	if len(byDir) == 0 {
		t.Fatalf("no test files under %s", root)
	}
	for dir, files := range byDir {
		dirHasAcc := slices.ContainsFunc(files, func(f testFile) bool { return f.acc })
		for _, f := range files {
			switch {
			case strings.HasSuffix(f.rel, "_internal_test.go"):
				t.Errorf("%s: name unit test files *_unit_test.go, acceptance test files *_test.go", f.rel)
			case strings.HasSuffix(f.rel, "_unit_test.go") && f.acc:
				t.Errorf("%s holds acceptance tests (TestAcc*): move them to a *_test.go file", f.rel)
			case strings.HasSuffix(f.rel, "_unit_test.go") && !dirHasAcc:
				t.Errorf("%s: %s has no acceptance tests, so its test files are named *_test.go", f.rel, dir)
			case !strings.HasSuffix(f.rel, "_unit_test.go") && dirHasAcc && f.unit && !f.acc:
				t.Errorf("%s holds only unit tests in a package with acceptance tests: name it *_unit_test.go", f.rel)
			}
		}
	}
}

type lineText struct {
	line int
	text string
}

// goComments returns every line of src's comments with its line number.
func goComments(src []byte) []lineText {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, scanner.ScanComments)
	var out []lineText
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok != token.COMMENT {
			continue
		}
		first := fset.Position(pos).Line
		for i, line := range strings.Split(lit, "\n") {
			out = append(out, lineText{first + i, line})
		}
	}
}

// walkRepo calls visit with every file of the repository (path relative to
// root), leaving out what is not the project's own text: version control,
// build output, hidden files, recorded CPU profiles and module checksums.
func walkRepo(t *testing.T, root string, visit func(rel string, src []byte)) {
	t.Helper()
	skipDirs := []string{"bin", "dist", filepath.Join("bench", "profiles")}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(name, ".") || slices.Contains(skipDirs, rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(name, ".") || name == "go.sum" || !d.Type().IsRegular() {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.IndexByte(src, 0) >= 0 {
			return nil // binary
		}
		visit(rel, src)
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
}

// repoRoot is the directory of the provider's go.mod, above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(mod, []byte("module github.com/ztfabric/terraform-provider-zerotrust\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal(fmt.Errorf("no go.mod of the provider above %s", dir))
		}
		dir = parent
	}
}
