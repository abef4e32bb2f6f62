package validate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// validatorCase is one value and what the validator must say about it: no
// diagnostic when wantSummary is empty, else one error with that summary
// whose detail contains each of wantDetail.
type validatorCase struct {
	value       types.String
	wantSummary string
	wantDetail  []string
}

func runValidatorCases(t *testing.T, v validator.String, cases map[string]validatorCase) {
	t.Helper()
	for name, test := range cases {
		t.Run(name, func(t *testing.T) {
			req := validator.StringRequest{
				Path:           path.Root("attr"),
				PathExpression: path.MatchRoot("attr"),
				ConfigValue:    test.value,
			}
			resp := &validator.StringResponse{}
			v.ValidateString(context.Background(), req, resp)
			assertDiagnostics(t, resp.Diagnostics, test.wantSummary, test.wantDetail...)
		})
	}
}

func assertDiagnostics(t *testing.T, diags diag.Diagnostics, wantSummary string, wantDetail ...string) {
	t.Helper()
	if wantSummary == "" {
		if len(diags) != 0 {
			t.Fatalf("unexpected diagnostics: %v", diags)
		}
		return
	}
	if len(diags) != 1 || diags.ErrorsCount() != 1 {
		t.Fatalf("want one error diagnostic %q, got %v", wantSummary, diags)
	}
	got := diags[0]
	if got.Summary() != wantSummary {
		t.Errorf("summary = %q, want %q", got.Summary(), wantSummary)
	}
	withPath, ok := got.(diag.DiagnosticWithPath)
	if !ok || !withPath.Path().Equal(path.Root("attr")) {
		t.Errorf("diagnostic is not attached to the attribute: %#v", got)
	}
	for _, want := range wantDetail {
		if !strings.Contains(got.Detail(), want) {
			t.Errorf("detail %q lacks %q", got.Detail(), want)
		}
	}
}

func TestDescriptions(t *testing.T) {
	ctx := context.Background()
	for name, v := range map[string]validator.String{
		"TrustDomain":     validate.TrustDomain(),
		"SPIFFEID":        validate.SPIFFEID(),
		"HTTPSURL":        validate.HTTPSURL(),
		"K8sName":         validate.K8sName(),
		"DNSLabel":        validate.DNSLabel(),
		"SPIFFEBundleFor": validate.SPIFFEBundleFor(path.MatchRoot("trust_domain")),
	} {
		if !strings.HasPrefix(v.Description(ctx), "value must be ") || !strings.HasPrefix(v.MarkdownDescription(ctx), "value must be ") {
			t.Errorf("%s: descriptions %q / %q do not read \"value must be ...\"", name, v.Description(ctx), v.MarkdownDescription(ctx))
		}
	}
}
