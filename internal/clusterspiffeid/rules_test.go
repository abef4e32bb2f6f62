package clusterspiffeid

import (
	"context"
	"slices"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// TestValidate: Validate names the attribute of each template the controller
// could not render and of each requirement whose values do not fit its
// operator, and holds against a SPIFFE ID template only what the sample pod
// cannot explain.
func TestValidate(t *testing.T) {
	ctx := context.Background()
	selectorType, expressionType := selectorTypes()
	selector := func(op string, values ...string) types.Object {
		vals := types.ListNull(types.StringType)
		if values != nil {
			vals, _ = types.ListValueFrom(ctx, types.StringType, values)
		}
		exprs, _ := types.ListValueFrom(ctx, expressionType, []expressionModel{{
			Key: types.StringValue("tier"), Operator: types.StringValue(op), Values: vals}})
		obj, _ := types.ObjectValueFrom(ctx, selectorType.AttrTypes, selectorModel{
			MatchLabels: types.MapNull(types.StringType), MatchExpressions: exprs})
		return obj
	}
	templates := func(texts ...string) types.List {
		l, _ := types.ListValueFrom(ctx, types.StringType, texts)
		return l
	}
	for name, tc := range map[string]struct {
		spec Spec
		want []string // the paths of the errors, in order
	}{
		"valid": {spec: Spec{SPIFFEIDTemplate: types.StringValue("spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}"),
			PodSelector: selector("In", "a"), NamespaceSelector: selector("Exists")}},
		"unknown template": {spec: Spec{SPIFFEIDTemplate: types.StringUnknown()}},
		"no SPIFFE ID":     {spec: Spec{SPIFFEIDTemplate: types.StringValue("web")}, want: []string{"spiffe_id_template"}},
		"sample pod has no labels": {spec: Spec{
			SPIFFEIDTemplate: types.StringValue(`{{ index .PodMeta.Labels "id" }}`)}},
		"unknown field": {spec: Spec{SPIFFEIDTemplate: types.StringValue("spiffe://{{ .TrustDomain }}/{{ .Nope }}"),
			DNSNameTemplates: templates("ok", "{{ .PodMeta.Nope }}"), WorkloadSelectorTemplates: templates("{{")},
			want: []string{"spiffe_id_template", "dns_name_templates[1]", "workload_selector_templates[0]"}},
		"selector values": {spec: Spec{SPIFFEIDTemplate: types.StringValue("spiffe://{{ .TrustDomain }}/x"),
			PodSelector: selector("In"), NamespaceSelector: selector("DoesNotExist", "a")},
			want: []string{"pod_selector.match_expressions[0].values", "namespace_selector.match_expressions[0].values"}},
	} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, d := range Validate(ctx, tc.spec) {
				if withPath, ok := d.(diag.DiagnosticWithPath); ok && d.Severity() == diag.SeverityError {
					got = append(got, withPath.Path().String())
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("errors at %v, want %v", got, tc.want)
			}
		})
	}
}
