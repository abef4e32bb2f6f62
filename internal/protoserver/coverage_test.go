package protoserver

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// TestEveryRPCIsReleased fails when terraform-plugin-go adds a server method
// that protoserver.go does not declare on releasing: such a method would
// still compile (the embedded ProviderServer promotes it) but pass its
// request's context to the framework unwrapped, so the framework would keep
// it alive again (the leak this package exists for), or, for the optional
// list and action servers, not be served at all.
func TestEveryRPCIsReleased(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), "protoserver.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 {
			continue
		}
		if recv, ok := fn.Recv.List[0].Type.(*ast.Ident); ok && recv.Name == "releasing" {
			declared[fn.Name.Name] = true
		}
	}
	for _, iface := range []reflect.Type{
		reflect.TypeFor[tfprotov6.ProviderServer](),
		reflect.TypeFor[tfprotov6.ListResourceServer](),
		reflect.TypeFor[tfprotov6.ActionServer](),
	} {
		for i := range iface.NumMethod() {
			m := iface.Method(i)
			if !declared[m.Name] {
				t.Errorf("%s.%s is not declared on releasing in protoserver.go: add it (through call, or detach "+
					"for a streaming RPC)", iface.Name(), m.Name)
			}
		}
	}
}
