package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// functionCase is one call of a provider function: the result it must
// return, or the argument it must blame (wantArgument, -1 for none) and text
// its error must contain.
type functionCase struct {
	arguments    []attr.Value
	want         attr.Value
	wantArgument int64
	wantError    []string
}

func runFunctionCases(t *testing.T, f function.Function, result attr.Value, cases map[string]functionCase) {
	t.Helper()
	for name, test := range cases {
		t.Run(name, func(t *testing.T) {
			req := function.RunRequest{Arguments: function.NewArgumentsData(test.arguments)}
			resp := &function.RunResponse{Result: function.NewResultData(result)}
			f.Run(context.Background(), req, resp)

			if len(test.wantError) == 0 {
				if resp.Error != nil {
					t.Fatalf("unexpected error: %v", resp.Error)
				}
				if want := function.NewResultData(test.want); !resp.Result.Equal(want) {
					t.Fatalf("result = %v, want %v", resp.Result.Value(), test.want)
				}
				return
			}
			if resp.Error == nil {
				t.Fatalf("no error; result %v", resp.Result.Value())
			}
			if test.wantArgument < 0 {
				if resp.Error.FunctionArgument != nil {
					t.Errorf("error blames argument %d, want none", *resp.Error.FunctionArgument)
				}
			} else if resp.Error.FunctionArgument == nil || *resp.Error.FunctionArgument != test.wantArgument {
				t.Errorf("error blames argument %v, want %d", resp.Error.FunctionArgument, test.wantArgument)
			}
			for _, want := range test.wantError {
				if !strings.Contains(resp.Error.Text, want) {
					t.Errorf("error %q lacks %q", resp.Error.Text, want)
				}
			}
		})
	}
}

func assertDefinition(t *testing.T, f function.Function, wantName string) function.Definition {
	t.Helper()
	ctx := context.Background()
	metadata := &function.MetadataResponse{}
	f.Metadata(ctx, function.MetadataRequest{}, metadata)
	if metadata.Name != wantName {
		t.Errorf("name = %q, want %q", metadata.Name, wantName)
	}
	definition := &function.DefinitionResponse{}
	f.Definition(ctx, function.DefinitionRequest{}, definition)
	if definition.Diagnostics.HasError() {
		t.Fatalf("definition diagnostics: %v", definition.Diagnostics)
	}
	validation := &function.DefinitionValidateResponse{}
	definition.Definition.ValidateImplementation(ctx, function.DefinitionValidateRequest{FuncName: wantName}, validation)
	if validation.Diagnostics.HasError() {
		t.Fatalf("definition is invalid: %v", validation.Diagnostics)
	}
	d := definition.Definition
	if d.Summary == "" || d.MarkdownDescription == "" {
		t.Error("definition lacks a summary or description")
	}
	parameters := d.Parameters
	if d.VariadicParameter != nil {
		parameters = append(parameters, d.VariadicParameter)
	}
	for _, parameter := range parameters {
		if parameter.GetMarkdownDescription() == "" {
			t.Errorf("parameter %q has no description", parameter.GetName())
		}
	}
	return d
}

func segments(values ...string) attr.Value {
	elementTypes := make([]attr.Type, len(values))
	elements := make([]attr.Value, len(values))
	for i, value := range values {
		elementTypes[i] = types.StringType
		elements[i] = types.StringValue(value)
	}
	return types.TupleValueMust(elementTypes, elements)
}

func TestSpiffeIDFunctionDefinition(t *testing.T) {
	d := assertDefinition(t, NewSpiffeIDFunction(), "spiffe_id")
	if len(d.Parameters) != 1 || d.VariadicParameter == nil {
		t.Error("spiffe_id must take a trust domain and variadic path segments")
	}
}

func TestSpiffeIDFunction(t *testing.T) {
	td := types.StringValue("example.org")
	runFunctionCases(t, NewSpiffeIDFunction(), types.StringUnknown(), map[string]functionCase{
		"server": {
			arguments: []attr.Value{td, segments("spire", "server")},
			want:      types.StringValue("spiffe://example.org/spire/server"),
		},
		"workload": {
			arguments: []attr.Value{types.StringValue("apps.east.example.com"), segments("ns", "Default", "sa", "my_app-1.0")},
			want:      types.StringValue("spiffe://apps.east.example.com/ns/Default/sa/my_app-1.0"),
		},
		"no segments": {
			arguments: []attr.Value{td, segments()},
			want:      types.StringValue("spiffe://example.org"),
		},
		"uppercase trust domain": {
			arguments:    []attr.Value{types.StringValue("Example.org"), segments("spire")},
			wantArgument: 0,
			wantError:    []string{`"Example.org" is not a valid trust domain name`, "lowercase letter"},
		},
		"spiffe id as trust domain": {
			arguments:    []attr.Value{types.StringValue("spiffe://example.org"), segments("spire")},
			wantArgument: 0,
			wantError:    []string{`is a SPIFFE ID, not a trust domain name: use "example.org"`},
		},
		"empty trust domain": {
			arguments:    []attr.Value{types.StringValue(""), segments()},
			wantArgument: 0,
			wantError:    []string{"trust domain is missing"},
		},
		"long trust domain": {
			arguments:    []attr.Value{types.StringValue(strings.Repeat("a", 256)), segments()},
			wantArgument: 0,
			wantError:    []string{"more than the limit of 255"},
		},
		"empty segment": {
			arguments:    []attr.Value{td, segments("spire", "")},
			wantArgument: 2,
			wantError:    []string{`Path segment 2 ("") is not valid: path cannot contain empty segments`},
		},
		"dot dot segment": {
			arguments:    []attr.Value{td, segments("..")},
			wantArgument: 1,
			wantError:    []string{"dot segments", `is not "." or ".."`},
		},
		"dot segment": {
			arguments:    []attr.Value{td, segments("a", "b", ".")},
			wantArgument: 3,
			wantError:    []string{"dot segments"},
		},
		"slash in segment": {
			arguments:    []attr.Value{td, segments("spire/server")},
			wantArgument: 1,
			wantError:    []string{"path segment characters are limited", "its own argument"},
		},
		"too long": {
			arguments:    []attr.Value{td, segments(strings.Repeat("a", 1000), strings.Repeat("b", 1000), strings.Repeat("c", 100))},
			wantArgument: -1,
			wantError:    []string{"more than the limit of 2048"},
		},
	})
}
