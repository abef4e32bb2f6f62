package validate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

var bundleTestSchema = schema.Schema{
	Attributes: map[string]schema.Attribute{
		"trust_domain":        schema.StringAttribute{Optional: true},
		"trust_domain_bundle": schema.StringAttribute{Optional: true},
		"peer": schema.SingleNestedAttribute{
			Optional: true,
			Attributes: map[string]schema.Attribute{
				"trust_domain": schema.StringAttribute{Optional: true},
				"bundle":       schema.StringAttribute{Optional: true},
			},
		},
	},
}

// bundleConfig builds a configuration with the same trust domain and bundle
// both at the top level and inside peer.
func bundleConfig(t *testing.T, trustDomain, bundle tftypes.Value) tfsdk.Config {
	t.Helper()
	objectType, ok := bundleTestSchema.Type().TerraformType(context.Background()).(tftypes.Object)
	if !ok {
		t.Fatal("schema type is not an object")
	}
	peerType, ok := objectType.AttributeTypes["peer"].(tftypes.Object)
	if !ok {
		t.Fatal("peer type is not an object")
	}
	return tfsdk.Config{
		Schema: bundleTestSchema,
		Raw: tftypes.NewValue(objectType, map[string]tftypes.Value{
			"trust_domain":        trustDomain,
			"trust_domain_bundle": bundle,
			"peer": tftypes.NewValue(peerType, map[string]tftypes.Value{
				"trust_domain": trustDomain,
				"bundle":       bundle,
			}),
		}),
	}
}

func TestSPIFFEBundleFor(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	east := spiffeid.RequireTrustDomainFromString("east.example.org")
	west := spiffeid.RequireTrustDomainFromString("west.example.org")
	valid := bundletest.NewCA(t, east, now.Add(-time.Hour), now.Add(time.Hour))
	expired := bundletest.NewCA(t, east, now.Add(-2*time.Hour), now.Add(-time.Hour))
	westCA := bundletest.NewCA(t, west, now.Add(-time.Hour), now.Add(time.Hour))

	str := func(value string) tftypes.Value { return tftypes.NewValue(tftypes.String, value) }
	null := tftypes.NewValue(tftypes.String, nil)
	unknown := tftypes.NewValue(tftypes.String, tftypes.UnknownValue)

	tests := map[string]struct {
		trustDomain  tftypes.Value
		bundle       types.String
		wantError    string
		wantWarning  string
		wantInDetail []string
	}{
		"valid": {
			trustDomain: str("east.example.org"),
			bundle:      types.StringValue(bundletest.BundleJSON(t, east, valid)),
		},
		"null bundle": {
			trustDomain: str("east.example.org"),
			bundle:      types.StringNull(),
		},
		"unknown bundle": {
			trustDomain: str("east.example.org"),
			bundle:      types.StringUnknown(),
		},
		"expired next to valid": {
			trustDomain:  str("east.example.org"),
			bundle:       types.StringValue(bundletest.BundleJSON(t, east, expired, valid)),
			wantWarning:  "Expired SPIFFE Bundle Authority",
			wantInDetail: []string{`"east.example.org" still has a valid X.509 authority`, "expired at 2026-06-01T11:00:00Z"},
		},
		"all expired": {
			trustDomain:  str("east.example.org"),
			bundle:       types.StringValue(bundletest.BundleJSON(t, east, expired)),
			wantError:    "Unusable SPIFFE Bundle",
			wantInDetail: []string{`trust bundle of "east.example.org"`, "No X.509 authority of the bundle is valid"},
		},
		"bundle of another trust domain": {
			trustDomain:  str("east.example.org"),
			bundle:       types.StringValue(bundletest.BundleJSON(t, west, westCA)),
			wantError:    "Unusable SPIFFE Bundle",
			wantInDetail: []string{"this is the bundle of another trust domain"},
		},
		"not json": {
			trustDomain:  str("east.example.org"),
			bundle:       types.StringValue("{"),
			wantError:    "Invalid SPIFFE Bundle",
			wantInDetail: []string{"spire-server bundle show -format spiffe", "unable to parse JWKS"},
		},
		"pem": {
			trustDomain:  str("east.example.org"),
			bundle:       types.StringValue(string(bundletest.PEM(valid))),
			wantError:    "Invalid SPIFFE Bundle",
			wantInDetail: []string{"is PEM"},
		},
		"null trust domain checks syntax only": {
			trustDomain: null,
			bundle:      types.StringValue(bundletest.BundleJSON(t, west, westCA)),
		},
		"unknown trust domain checks syntax only": {
			trustDomain: unknown,
			bundle:      types.StringValue(bundletest.BundleJSON(t, east, expired)),
		},
		"invalid trust domain checks syntax only": {
			trustDomain: str("East.example.org"),
			bundle:      types.StringValue(bundletest.BundleJSON(t, east, expired)),
		},
		"null trust domain still rejects bad syntax": {
			trustDomain: null,
			bundle:      types.StringValue(`{"keys": 1}`),
			wantError:   "Invalid SPIFFE Bundle",
		},
	}

	placements := map[string]struct {
		attribute  path.Path
		expression path.Expression
	}{
		"root": {
			attribute:  path.Root("trust_domain_bundle"),
			expression: path.MatchRoot("trust_domain"),
		},
		"relative": {
			attribute:  path.Root("peer").AtName("bundle"),
			expression: path.MatchRelative().AtParent().AtName("trust_domain"),
		},
	}

	for placementName, placement := range placements {
		for name, test := range tests {
			t.Run(placementName+"/"+name, func(t *testing.T) {
				v := spiffeBundleValidator{trustDomain: placement.expression, now: func() time.Time { return now }}
				req := validator.StringRequest{
					Path:           placement.attribute,
					PathExpression: placement.attribute.Expression(),
					Config:         bundleConfig(t, test.trustDomain, tftypes.NewValue(tftypes.String, nil)),
					ConfigValue:    test.bundle,
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
				for _, want := range test.wantInDetail {
					if !strings.Contains(diags[0].Detail(), want) {
						t.Errorf("detail %q lacks %q", diags[0].Detail(), want)
					}
				}
			})
		}
	}
}

func TestSPIFFEBundleForUsesTheClock(t *testing.T) {
	east := spiffeid.RequireTrustDomainFromString("east.example.org")
	current := bundletest.NewCA(t, east, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	v := SPIFFEBundleFor(path.MatchRoot("trust_domain"))
	req := validator.StringRequest{
		Path:           path.Root("trust_domain_bundle"),
		PathExpression: path.MatchRoot("trust_domain_bundle"),
		Config:         bundleConfig(t, tftypes.NewValue(tftypes.String, "east.example.org"), tftypes.NewValue(tftypes.String, nil)),
		ConfigValue:    types.StringValue(bundletest.BundleJSON(t, east, current)),
	}
	resp := &validator.StringResponse{}
	v.ValidateString(context.Background(), req, resp)
	if len(resp.Diagnostics) != 0 {
		t.Fatalf("a currently valid bundle got diagnostics: %v", resp.Diagnostics)
	}
}
