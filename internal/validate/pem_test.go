package validate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

func TestPEMCertificates(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	east := spiffeid.RequireTrustDomainFromString("east.example.org")
	west := spiffeid.RequireTrustDomainFromString("west.example.org")
	valid := bundletest.NewCA(t, east, now.Add(-time.Hour), now.Add(time.Hour))
	expired := bundletest.NewCA(t, east, now.Add(-2*time.Hour), now.Add(-time.Hour))
	future := bundletest.NewCA(t, east, now.Add(time.Hour), now.Add(2*time.Hour))
	westCA := bundletest.NewCA(t, west, now.Add(-time.Hour), now.Add(time.Hour))
	pemOf := func(cas ...*bundletest.CA) types.String { return types.StringValue(string(bundletest.PEM(cas...))) }
	str := func(value string) tftypes.Value { return tftypes.NewValue(tftypes.String, value) }

	tests := map[string]struct {
		withTrustDomain bool
		trustDomain     tftypes.Value
		value           types.String
		wantError       string
		wantWarning     string
		wantInDetail    []string
	}{
		"null":      {value: types.StringNull()},
		"unknown":   {value: types.StringUnknown()},
		"one valid": {value: pemOf(valid)},
		"valid of any trust domain without one to compare": {value: pemOf(westCA)},
		"expired next to valid": {
			value: pemOf(expired, valid), wantWarning: "Expired CA Certificate",
			wantInDetail: []string{"expired at 2026-06-01T11:00:00Z"},
		},
		"all expired or not yet valid": {
			value: pemOf(expired, future), wantError: "Unusable PEM Certificates",
			wantInDetail: []string{"No certificate is valid", "not valid before 2026-06-01T13:00:00Z"},
		},
		"not pem": {
			value: types.StringValue("hello"), wantError: "Invalid PEM Certificates",
			wantInDetail: []string{"-----BEGIN CERTIFICATE-----", "holds no CERTIFICATE block"},
		},
		"truncated": {
			value:     types.StringValue(string(bundletest.PEM(valid)) + "-----BEGIN CERTIFICATE-----\nMIIB\n"),
			wantError: "Invalid PEM Certificates", wantInDetail: []string{"malformed or truncated"},
		},
		"matching trust domain": {withTrustDomain: true, trustDomain: str("east.example.org"), value: pemOf(valid)},
		"another trust domain": {
			withTrustDomain: true, trustDomain: str("east.example.org"), value: pemOf(westCA),
			wantError: "Unusable PEM Certificates", wantInDetail: []string{`belongs to trust domain "west.example.org"`},
		},
		"unknown trust domain checks validity only": {
			withTrustDomain: true, trustDomain: tftypes.NewValue(tftypes.String, tftypes.UnknownValue), value: pemOf(westCA),
		},
		"expired with trust domain": {
			withTrustDomain: true, trustDomain: str("east.example.org"), value: pemOf(expired),
			wantError: "Unusable PEM Certificates", wantInDetail: []string{"No X.509 authority of the bundle is valid"},
		},
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			v := pemCertificatesValidator{now: func() time.Time { return now }}
			if test.withTrustDomain {
				expr := path.MatchRoot("trust_domain")
				v.trustDomain = &expr
			}
			trustDomain := test.trustDomain
			if !test.withTrustDomain {
				trustDomain = tftypes.NewValue(tftypes.String, nil)
			}
			req := validator.StringRequest{
				Path:           path.Root("trust_domain_bundle"),
				PathExpression: path.MatchRoot("trust_domain_bundle"),
				Config:         bundleConfig(t, trustDomain, tftypes.NewValue(tftypes.String, nil)),
				ConfigValue:    test.value,
			}
			resp := &validator.StringResponse{}
			v.ValidateString(context.Background(), req, resp)
			diags := resp.Diagnostics
			switch {
			case test.wantError == "" && test.wantWarning == "":
				if len(diags) != 0 {
					t.Fatalf("unexpected diagnostics: %v", diags)
				}
				return
			case test.wantError != "":
				if diags.ErrorsCount() != 1 || len(diags) != 1 || diags[0].Summary() != test.wantError {
					t.Fatalf("want one error %q, got %v", test.wantError, diags)
				}
			default:
				if diags.WarningsCount() != 1 || len(diags) != 1 || diags[0].Summary() != test.wantWarning {
					t.Fatalf("want one warning %q, got %v", test.wantWarning, diags)
				}
			}
			if !strings.Contains(diags[0].Detail(), "Attribute trust_domain_bundle:") {
				t.Errorf("detail %q does not name the attribute", diags[0].Detail())
			}
			for _, want := range test.wantInDetail {
				if !strings.Contains(diags[0].Detail(), want) {
					t.Errorf("detail %q lacks %q", diags[0].Detail(), want)
				}
			}
		})
	}
}

func TestPEMCertificatesUsesTheClock(t *testing.T) {
	east := spiffeid.RequireTrustDomainFromString("east.example.org")
	current := bundletest.NewCA(t, east, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	resp := &validator.StringResponse{}
	PEMCertificates().ValidateString(context.Background(), validator.StringRequest{
		Path: path.Root("pem"), PathExpression: path.MatchRoot("pem"),
		ConfigValue: types.StringValue(string(bundletest.PEM(current))),
	}, resp)
	if len(resp.Diagnostics) != 0 {
		t.Fatalf("a currently valid certificate got diagnostics: %v", resp.Diagnostics)
	}
}
