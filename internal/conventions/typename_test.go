package conventions_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// typeNameFile is the one place a Terraform type name is spelled in Go.
const typeNameFile = "internal/typename/typename.go"

// typeNameConstants are the constants of type Name in typeNameFile, by
// identifier: every type name the provider serves.
func typeNameConstants(t *testing.T) map[string]string {
	t.Helper()
	path := filepath.Join(repoRoot(t), filepath.FromSlash(typeNameFile))
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		gen, ok := d.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs, ok := spec.(*ast.ValueSpec)
			if !ok {
				continue
			}
			if typ, ok := vs.Type.(*ast.Ident); !ok || typ.Name != "Name" {
				continue
			}
			for i, id := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil {
						out[id.Name] = v
					}
				}
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("found only %d type names in %s: its constants changed shape", len(out), typeNameFile)
	}
	return out
}

var tfsdkTag = regexp.MustCompile(`tfsdk:"([a-z0-9_]+)"`)

// spellsTypeName reports which type name a Go string literal's value v
// spells as a name: the full name ("zerotrust_istio_csr"), the suffix a
// Metadata appends ("_istio_csr"), the rbac table's "resource zerotrust_..."
// forms, or the bare name ("istio_csr") unless attribute names it too (an
// attribute named like a type, spire_server, is the attribute's). Prose that
// mentions a type among other words, and HCL, are not names.
func spellsTypeName(v string, names map[string]string, attribute map[string]bool) string {
	for _, n := range names {
		full := "zerotrust_" + n
		switch v {
		case full, "_" + n, "resource " + full, "data source " + full, "list " + full, "action " + full:
			return n
		case n:
			if !attribute[n] {
				return n
			}
		}
	}
	return ""
}

// TestTypeNamesSpelledOnce: no Go file but typeNameFile spells a type name
// (spellsTypeName); resources take theirs from their descriptor (typeInfo),
// data sources and actions, the rbac table, the fast paths and the
// conformance mapping from internal/typename. Test files are left out except
// the conformance mapping's (internal/conformance): an acceptance test's
// configuration and the addresses it checks are Terraform text, which says
// what it tests better spelled out.
func TestTypeNamesSpelledOnce(t *testing.T) {
	root := repoRoot(t)
	names := typeNameConstants(t)
	attribute := map[string]bool{}
	walkRepo(t, root, func(rel string, src []byte) {
		if strings.HasSuffix(rel, ".go") {
			for _, m := range tfsdkTag.FindAllSubmatch(src, -1) {
				attribute[string(m[1])] = true
			}
		}
	})
	files := 0
	walkRepo(t, root, func(rel string, src []byte) {
		rel = filepath.ToSlash(rel)
		if !strings.HasSuffix(rel, ".go") || rel == typeNameFile ||
			(strings.HasSuffix(rel, "_test.go") && !strings.HasPrefix(rel, "internal/conformance/")) {
			return
		}
		files++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if name := spellsTypeName(v, names, attribute); name != "" {
				t.Errorf("%s:%d spells the type name %q: take it from internal/typename (a resource from its typeInfo)",
					rel, fset.Position(lit.Pos()).Line, name)
			}
			return true
		})
	})
	if files < 100 {
		t.Fatalf("read only %d Go files under %s: the walk missed the repository", files, root)
	}
}

// TestSpellsTypeName pins down what counts as spelling a name.
func TestSpellsTypeName(t *testing.T) {
	names := map[string]string{"IstioCSR": "istio_csr", "SpireServer": "spire_server"}
	attribute := map[string]bool{"spire_server": true}
	for v, want := range map[string]string{
		"zerotrust_istio_csr":                "istio_csr",
		"_istio_csr":                         "istio_csr",
		"istio_csr":                          "istio_csr",
		"resource zerotrust_istio_csr":       "istio_csr",
		"data source zerotrust_spire_server": "spire_server",
		"spire_server":                       "",
		"create it first (zerotrust_istio_csr manages one)": "",
		`resource "zerotrust_istio_csr" "this" {`:           "",
		"zerotrust_istio_csr.this":                          "",
	} {
		if got := spellsTypeName(v, names, attribute); got != want {
			t.Errorf("spellsTypeName(%q) = %q, want %q", v, got, want)
		}
	}
}
