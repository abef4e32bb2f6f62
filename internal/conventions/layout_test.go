package conventions_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestResourceHelpersStayHome: a name declared at the top level of a file
// of one resource of internal/resources (<name>_*.go, <name> a registered
// type name), whatever its kind (function, constant, variable, type) and
// whether exported or not, is used by that resource's files only; a name a
// second resource or a shared file needs lives in a shared file (see the
// package comment). The one exception is registry.go's use of a resource's
// exported constructors (New<Thing>Resource, its list and fast path), which
// are there to be registered.
func TestResourceHelpersStayHome(t *testing.T) {
	findings, homes := resourceNamesAwayFromHome(t, filepath.Join(repoRoot(t), "internal", "resources"))
	if homes < 50 {
		t.Fatalf("found only %d top-level names in the resources' files: the test reads nothing", homes)
	}
	for _, f := range findings {
		t.Error(f)
	}
}

// resourceNamesAwayFromHome reads the package in dir and returns each use
// of a resource's top-level name outside that resource's files, and how
// many such names it found.
func resourceNamesAwayFromHome(t *testing.T, dir string) (findings []string, homes int) {
	t.Helper()
	fset := token.NewFileSet()
	files := parseProduction(t, fset, dir)
	names := registeredTypeNames(files, typeNameConstants(t))
	if len(names) < 5 {
		t.Fatalf("found only %d registered type names (%v) in %s: the typeInfo literals changed shape", len(names), names, dir)
	}
	ownerOf := func(f *ast.File) string { return resourceOfFile(filepath.Base(fset.Position(f.Pos()).Filename), names) }

	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: stubImporter{}, Error: func(error) {}}
	// Imports resolve to empty packages, so the check reports errors about
	// their members; what matters here, which declaration of the package
	// each identifier names, it still records.
	_, _ = conf.Check("resources", fset, files, info)

	type home struct{ file, resource string }
	homeOf := map[types.Object]home{}
	for _, f := range files {
		owner := ownerOf(f)
		if owner == "" {
			continue
		}
		for _, id := range topLevelNames(f) {
			if obj := info.Defs[id]; obj != nil {
				homeOf[obj] = home{filepath.Base(fset.Position(id.Pos()).Filename), owner}
			}
		}
	}
	for _, f := range files {
		user := ownerOf(f)
		file := filepath.Base(fset.Position(f.Pos()).Filename)
		for id, obj := range info.Uses {
			h, ok := homeOf[obj]
			if !ok || user == h.resource || fset.File(id.Pos()) != fset.File(f.Pos()) {
				continue
			}
			if file == "registry.go" && strings.HasPrefix(id.Name, "New") {
				continue
			}
			where := "shared file " + file
			if user != "" {
				where = "resource " + user + "'s " + file
			}
			findings = append(findings, h.file+": "+id.Name+" (resource "+h.resource+") is used by "+where+
				": move it to a shared file internal/resources/doc.go names")
		}
	}
	slices.Sort(findings)
	return slices.Compact(findings), len(homeOf)
}

// topLevelNames are the names a file declares at its top level: functions
// (not methods, which go with their type), constants, variables and types.
func topLevelNames(f *ast.File) []*ast.Ident {
	var ids []*ast.Ident
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				ids = append(ids, d.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch spec := spec.(type) {
				case *ast.ValueSpec:
					ids = append(ids, spec.Names...)
				case *ast.TypeSpec:
					ids = append(ids, spec.Name)
				}
			}
		}
	}
	return ids
}

// resourceOfFile is the registered type name whose files name begins with
// (the longest: cluster_spiffe_id_federation_list.go is not
// cluster_spiffe_id's), or "" for a shared file.
func resourceOfFile(base string, names []string) string {
	owner := ""
	for _, n := range names {
		if strings.HasPrefix(base, n+"_") && len(n) > len(owner) {
			owner = n
		}
	}
	return owner
}

// TestResourceOfFile pins down the prefix rule on names that share a prefix.
func TestResourceOfFile(t *testing.T) {
	names := []string{"cluster_spiffe_id", "cluster_spiffe_id_federation", "spire_bundle"}
	for base, want := range map[string]string{
		"cluster_spiffe_id_model.go":            "cluster_spiffe_id",
		"cluster_spiffe_id_federation_model.go": "cluster_spiffe_id_federation",
		"spire_bundle_resource.go":              "spire_bundle",
		"spire_walk.go":                         "",
		"values.go":                             "",
		"cluster_spiffe_idx.go":                 "",
	} {
		if got := resourceOfFile(base, names); got != want {
			t.Errorf("resourceOfFile(%q) = %q, want %q", base, got, want)
		}
	}
}

// registeredTypeNames are the names the name fields of the package's
// typeInfo literals take from internal/typename (consts, by identifier).
func registeredTypeNames(files []*ast.File, consts map[string]string) []string {
	var names []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			if typ, ok := lit.Type.(*ast.Ident); !ok || typ.Name != "typeInfo" {
				return true
			}
			for _, e := range lit.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				key, ok := kv.Key.(*ast.Ident)
				val, isSel := kv.Value.(*ast.SelectorExpr)
				if ok && key.Name == "name" && isSel && consts[val.Sel.Name] != "" {
					names = append(names, consts[val.Sel.Name])
				}
			}
			return true
		})
	}
	return names
}

// parseProduction parses the package's non-test Go files in dir.
func parseProduction(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// stubImporter answers every import with an empty package, so that a
// package is type-checked alone, without building its dependencies.
type stubImporter struct{}

// versionSuffix is a major-version path element (github.com/x/y/v2), which
// is not the package's name.
var versionSuffix = regexp.MustCompile(`^v[0-9]+$`)

func (stubImporter) Import(path string) (*types.Package, error) {
	parts := strings.Split(path, "/")
	name := parts[len(parts)-1]
	if versionSuffix.MatchString(name) && len(parts) > 1 {
		name = parts[len(parts)-2]
	}
	pkg := types.NewPackage(path, strings.ReplaceAll(name, "-", ""))
	pkg.MarkComplete()
	return pkg, nil
}

// maxProductionLines bounds a Go file that is not a test: past it, a file
// is split by concern (see internal/resources/doc.go).
const maxProductionLines = 550

// TestFilesFitTheBound: no Go file but a test file is longer than
// maxProductionLines. The bound is about reading, so it holds for test
// tooling (internal/testkit, internal/standin, internal/acctest) and bench/
// as much as for what the provider binary links: a reader follows a
// stand-in or the harness as closely as a resource. Test files are left
// out: an acceptance test file is mostly configurations and expected
// values, whose length follows the cases it covers, not its logic.
func TestFilesFitTheBound(t *testing.T) {
	root := repoRoot(t)
	files := 0
	walkRepo(t, root, func(rel string, src []byte) {
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return
		}
		files++
		if n := bytes.Count(src, []byte("\n")); n > maxProductionLines {
			t.Errorf("%s has %d lines, more than %d: split it by concern under a further suffix", rel, n, maxProductionLines)
		}
	})
	if files < 100 {
		t.Fatalf("read only %d Go files under %s: the walk missed the repository", files, root)
	}
}

// labStarter is the one file of test code that starts labs (LabFor): one
// start timeout, one work directory layout, one stop at exit.
const labStarter = "internal/acctest/labs.go"

// harnessPackage is the import path of the lab's starter.
const harnessPackage = "github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"

// localNamesOf is the set of names f imports path under: its package name,
// or each alias ("." for a dot import).
func localNamesOf(f *ast.File, path string) map[string]bool {
	names := map[string]bool{}
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, "`\"") != path {
			continue
		}
		if imp.Name != nil {
			names[imp.Name.Name] = true
		} else {
			names[path[strings.LastIndex(path, "/")+1:]] = true
		}
	}
	return names
}

// TestTestsStartLabsThroughLabFor: no test code but labStarter calls
// harness.Start, under whatever name a file imports the harness. The demo lab (internal/testkit/cmd/ztlab) and the
// benchmark (bench/) are programs of their own and start theirs.
func TestTestsStartLabsThroughLabFor(t *testing.T) {
	root := repoRoot(t)
	calls := 0
	walkRepo(t, root, func(rel string, src []byte) {
		rel = filepath.ToSlash(rel)
		if !strings.HasSuffix(rel, ".go") || !strings.HasPrefix(rel, "internal/") || strings.HasPrefix(rel, "internal/testkit/") {
			return
		}
		f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return
		}
		harnessNames := localNamesOf(f, harnessPackage)
		if len(harnessNames) == 0 {
			return
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "Start" && harnessNames["."] {
				// A dot import: Start is the harness's.
				calls++
				if rel != labStarter {
					t.Errorf("%s calls harness.Start (dot import): start the lab through acctest.LabFor (%s)", rel, labStarter)
				}
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Start" {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || !harnessNames[pkg.Name] {
				return true
			}
			calls++
			if rel != labStarter {
				t.Errorf("%s calls harness.Start: start the lab through acctest.LabFor (%s), which bounds the start and stops the lab at exit", rel, labStarter)
			}
			return true
		})
	})
	if calls == 0 {
		t.Fatalf("no call of harness.Start under %s/internal: the test reads nothing", root)
	}
}
