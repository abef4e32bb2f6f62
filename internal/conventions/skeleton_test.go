package conventions_test

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"slices"
	"testing"
)

// skeletonMethods are the methods kubeResource (internal/resources/
// kube_resource.go) serves to every single-kind Kubernetes resource: a
// resource that declares one of its own opts out of the skeleton, where a
// hook of the descriptor (completing, plan, refreshing, deleting,
// afterRead, afterImport) says what the type does its own way.
var skeletonMethods = []string{"Metadata", "IdentitySchema", "Read", "ImportState", "Delete", "Identity", "Refresh", "Plan"}

// TestKubeResourcesTakeTheSkeleton: no type of internal/resources that
// embeds kubeResource declares a method the skeleton serves.
func TestKubeResourcesTakeTheSkeleton(t *testing.T) {
	fset := token.NewFileSet()
	files := parseProduction(t, fset, filepath.Join(repoRoot(t), "internal", "resources"))
	onSkeleton := skeletonTypes(files)
	if len(onSkeleton) < 6 {
		t.Fatalf("found %d types embedding kubeResource, want at least 6: the test reads nothing", len(onSkeleton))
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			id, ok := typ.(*ast.Ident)
			if !ok || !onSkeleton[id.Name] || !slices.Contains(skeletonMethods, fn.Name.Name) {
				continue
			}
			t.Errorf("%s: %s declares %s, which the skeleton (kube_resource.go) serves: give the descriptor the hook "+
				"for the step the type does its own way instead", fset.Position(fn.Pos()), id.Name, fn.Name.Name)
		}
	}
}

// skeletonPrologues are the skeleton's prologues each method of a type on
// the skeleton starts from, directly or through a method of its own: the
// plan and client an apply starts from, the plan a ModifyPlan completes.
var skeletonPrologues = map[string]string{"Create": "applying", "Update": "applying", "ModifyPlan": "planned"}

// TestKubeResourcesStartFromTheSkeleton: every Create, Update and
// ModifyPlan of a type that embeds kubeResource reaches the skeleton's
// prologue (skeletonPrologues) instead of reading its request by hand.
func TestKubeResourcesStartFromTheSkeleton(t *testing.T) {
	fset := token.NewFileSet()
	files := parseProduction(t, fset, filepath.Join(repoRoot(t), "internal", "resources"))
	// calls[type][method] are the methods of the same receiver it calls.
	calls := map[string]map[string][]string{}
	pos := map[string]token.Pos{}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 || len(fn.Recv.List[0].Names) != 1 || fn.Body == nil {
				continue
			}
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			id, ok := typ.(*ast.Ident)
			if !ok {
				continue
			}
			recv := fn.Recv.List[0].Names[0].Name
			if calls[id.Name] == nil {
				calls[id.Name] = map[string][]string{}
			}
			pos[id.Name+"."+fn.Name.Name] = fn.Pos()
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == recv {
						calls[id.Name][fn.Name.Name] = append(calls[id.Name][fn.Name.Name], sel.Sel.Name)
					}
				}
				return true
			})
		}
	}
	var reaches func(typ, method, target string, seen map[string]bool) bool
	reaches = func(typ, method, target string, seen map[string]bool) bool {
		if method == target {
			return true
		}
		if seen[method] {
			return false
		}
		seen[method] = true
		for _, c := range calls[typ][method] {
			if reaches(typ, c, target, seen) {
				return true
			}
		}
		return false
	}
	checked := 0
	for typ := range skeletonTypes(files) {
		for method, prologue := range skeletonPrologues {
			if _, declared := pos[typ+"."+method]; !declared {
				continue
			}
			checked++
			if !reaches(typ, method, prologue, map[string]bool{}) {
				t.Errorf("%s: %s.%s does not start from the skeleton's %s (kube_resource.go)", fset.Position(pos[typ+"."+method]), typ, method, prologue)
			}
		}
	}
	if checked < 12 {
		t.Fatalf("checked %d methods, want every Create, Update and ModifyPlan of the types on the skeleton", checked)
	}
}

// planReachFile is where a plan-time check gets its cluster (planLookup).
const planReachFile = "plan_reach.go"

// TestPlansReachClustersOneWay: no file of internal/resources but
// planReachFile builds a cluster's client for a plan itself (planClient,
// knownClient, Clusters.Client): every plan-time check goes through
// planLookup, which bounds it and says once that a cluster does not answer.
func TestPlansReachClustersOneWay(t *testing.T) {
	fset := token.NewFileSet()
	files := parseProduction(t, fset, filepath.Join(repoRoot(t), "internal", "resources"))
	lookups := 0
	for _, f := range files {
		base := filepath.Base(fset.Position(f.Pos()).Filename)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			name := ""
			switch fun := call.Fun.(type) {
			case *ast.Ident:
				name = fun.Name
			case *ast.SelectorExpr:
				if x, ok := fun.X.(*ast.SelectorExpr); ok && x.Sel.Name == "Clusters" && fun.Sel.Name == "Client" {
					name = "Clusters.Client"
				}
			}
			switch {
			case name == "planLookup" || name == "planReach":
				lookups++
			case base != planReachFile && (name == "planClient" || name == "knownClient" || name == "Clusters.Client"):
				t.Errorf("%s calls %s: a plan-time check gets its cluster through planLookup (%s)", fset.Position(call.Pos()), name, planReachFile)
			}
			return true
		})
	}
	if lookups < 5 {
		t.Fatalf("found %d calls of planLookup: the test reads nothing", lookups)
	}
}

// skeletonTypes are the types of files that embed kubeResource.
func skeletonTypes(files []*ast.File) map[string]bool {
	onSkeleton := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := spec.Type.(*ast.StructType)
			if !ok {
				return true
			}
			for _, field := range st.Fields.List {
				if idx, ok := field.Type.(*ast.IndexExpr); ok && len(field.Names) == 0 {
					if id, ok := idx.X.(*ast.Ident); ok && id.Name == "kubeResource" {
						onSkeleton[spec.Name.Name] = true
					}
				}
			}
			return true
		})
	}
	return onSkeleton
}
