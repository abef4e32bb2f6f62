package validate_test

import (
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func TestSpelledExactly(t *testing.T) {
	const summary = "Invalid Spelling"
	runValidatorCases(t, validate.SpelledExactly("the webhook compares exactly", "Issuer", "ClusterIssuer"), map[string]validatorCase{
		"null":          {value: types.StringNull()},
		"unknown":       {value: types.StringUnknown()},
		"issuer":        {value: types.StringValue("Issuer")},
		"cluster":       {value: types.StringValue("ClusterIssuer")},
		"lower cluster": {value: types.StringValue("clusterissuer"), wantSummary: summary, wantDetail: []string{`"clusterissuer"`, `write "ClusterIssuer"`, "webhook compares exactly", `exactly "Issuer" or "ClusterIssuer"`}},
		"lower issuer":  {value: types.StringValue("issuer"), wantSummary: summary, wantDetail: []string{`write "Issuer"`}},
		"other":         {value: types.StringValue("Certificate"), wantSummary: summary, wantDetail: []string{"not one of the accepted values"}},
	})
}

func TestDurationAtLeast(t *testing.T) {
	const summary = "Duration Too Short"
	runValidatorCases(t, validate.DurationAtLeast(time.Hour, "cert-manager refuses it"), map[string]validatorCase{
		"null":      {value: types.StringNull()},
		"unknown":   {value: types.StringUnknown()},
		"exactly":   {value: types.StringValue("1h")},
		"canonical": {value: types.StringValue("1h0m0s")},
		"longer":    {value: types.StringValue("90m")},
		"unparsed":  {value: types.StringValue("1d")},
		"short":     {value: types.StringValue("30m"), wantSummary: summary, wantDetail: []string{"at least 1h", "30m is shorter than 1h", "cert-manager refuses it"}},
		"just":      {value: types.StringValue("59m59s"), wantSummary: summary},
	})
}
