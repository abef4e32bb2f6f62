package validate_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func TestK8sName(t *testing.T) {
	const summary = "Invalid Kubernetes Name"
	runValidatorCases(t, validate.K8sName(), map[string]validatorCase{
		"null":           {value: types.StringNull()},
		"unknown":        {value: types.StringUnknown()},
		"simple":         {value: types.StringValue("spire-bundle")},
		"dotted":         {value: types.StringValue("east.example.org")},
		"253 characters": {value: types.StringValue(strings.Repeat("a", 253))},
		"254 characters": {value: types.StringValue(strings.Repeat("a", 254)), wantSummary: summary, wantDetail: []string{"must be no more than 253 characters"}},
		"uppercase":      {value: types.StringValue("Spire"), wantSummary: summary, wantDetail: []string{"DNS-1123 subdomain", "lowercase RFC 1123 subdomain"}},
		"underscore":     {value: types.StringValue("spire_bundle"), wantSummary: summary, wantDetail: []string{"lowercase RFC 1123 subdomain"}},
		"leading dash":   {value: types.StringValue("-spire"), wantSummary: summary},
		"empty":          {value: types.StringValue(""), wantSummary: summary},
	})
}

func TestDNSLabel(t *testing.T) {
	const summary = "Invalid DNS Label"
	runValidatorCases(t, validate.DNSLabel(), map[string]validatorCase{
		"null":          {value: types.StringNull()},
		"unknown":       {value: types.StringUnknown()},
		"namespace":     {value: types.StringValue("zero-trust-workload-identity-manager")},
		"63 characters": {value: types.StringValue(strings.Repeat("a", 63))},
		"64 characters": {value: types.StringValue(strings.Repeat("a", 64)), wantSummary: summary, wantDetail: []string{"must be no more than 63 characters"}},
		"dot":           {value: types.StringValue("kube.system"), wantSummary: summary, wantDetail: []string{"must not contain dots"}},
		"underscore":    {value: types.StringValue("kube_system"), wantSummary: summary, wantDetail: []string{"lowercase RFC 1123 label"}},
		"uppercase":     {value: types.StringValue("Kube"), wantSummary: summary},
		"trailing dash": {value: types.StringValue("kube-"), wantSummary: summary},
	})
}
