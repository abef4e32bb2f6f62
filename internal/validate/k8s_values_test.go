package validate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func TestQuantity(t *testing.T) {
	const summary = "Invalid Resource Quantity"
	runValidatorCases(t, validate.Quantity(), map[string]validatorCase{
		"null":      {value: types.StringNull()},
		"unknown":   {value: types.StringUnknown()},
		"millicpu":  {value: types.StringValue("100m")},
		"mebibytes": {value: types.StringValue("64Mi")},
		"integer":   {value: types.StringValue("2")},
		"unit typo": {value: types.StringValue("64MB"), wantSummary: summary, wantDetail: []string{`"64MB"`, "quantities must match"}},
		"empty":     {value: types.StringValue(""), wantSummary: summary},
	})
}

func TestLabelKeyAndValue(t *testing.T) {
	runValidatorCases(t, validate.LabelKey(), map[string]validatorCase{
		"plain":       {value: types.StringValue("team")},
		"prefixed":    {value: types.StringValue("app.kubernetes.io/name")},
		"space":       {value: types.StringValue("my team"), wantSummary: "Invalid Label Key", wantDetail: []string{"label key"}},
		"empty":       {value: types.StringValue(""), wantSummary: "Invalid Label Key"},
		"two slashes": {value: types.StringValue("a/b/c"), wantSummary: "Invalid Label Key"},
	})
	runValidatorCases(t, validate.LabelValue(), map[string]validatorCase{
		"plain":    {value: types.StringValue("mesh")},
		"empty":    {value: types.StringValue("")},
		"slash":    {value: types.StringValue("a/b"), wantSummary: "Invalid Label Value"},
		"too long": {value: types.StringValue(strings.Repeat("a", 64)), wantSummary: "Invalid Label Value", wantDetail: []string{"63"}},
	})
}

func TestLabelSelector(t *testing.T) {
	runValidatorCases(t, validate.LabelSelector(), map[string]validatorCase{
		"equality":  {value: types.StringValue("istio-injection=enabled")},
		"set based": {value: types.StringValue("env in (prod,staging),!legacy")},
		"broken":    {value: types.StringValue("env in (prod"), wantSummary: "Invalid Label Selector"},
	})
}

func TestDuration(t *testing.T) {
	const summary = "Invalid Duration"
	runValidatorCases(t, validate.Duration(), map[string]validatorCase{
		"hours":    {value: types.StringValue("1h")},
		"combined": {value: types.StringValue("1h30m")},
		"no unit":  {value: types.StringValue("60"), wantSummary: summary, wantDetail: []string{"missing unit"}},
		"days":     {value: types.StringValue("1d"), wantSummary: summary, wantDetail: []string{"unknown unit"}},
		"zero":     {value: types.StringValue("0s"), wantSummary: summary, wantDetail: []string{"not positive"}},
		"negative": {value: types.StringValue("-1h"), wantSummary: summary, wantDetail: []string{"not positive"}},
	})
}

func TestStrictJSON(t *testing.T) {
	v := validate.StrictJSON("a Kubernetes Affinity", func() any { return &corev1.Affinity{} })
	runValidatorCases(t, v, map[string]validatorCase{
		"affinity":       {value: types.StringValue(`{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"kubernetes.io/os","operator":"In","values":["linux"]}]}]}}}`)},
		"empty object":   {value: types.StringValue(`{}`)},
		"misspelt field": {value: types.StringValue(`{"nodeAfinity":{}}`), wantSummary: "Invalid JSON", wantDetail: []string{`unknown field "nodeAfinity"`, "Affinity"}},
		"not json":       {value: types.StringValue(`nodeAffinity`), wantSummary: "Invalid JSON"},
		"wrong type":     {value: types.StringValue(`[]`), wantSummary: "Invalid JSON"},
		"two values":     {value: types.StringValue(`{} {}`), wantSummary: "Invalid JSON", wantDetail: []string{"more than one"}},
	})
}

func TestNewValidatorDescriptions(t *testing.T) {
	ctx := context.Background()
	for name, v := range map[string]validator.String{
		"Quantity":           validate.Quantity(),
		"LabelKey":           validate.LabelKey(),
		"LabelValue":         validate.LabelValue(),
		"LabelSelector":      validate.LabelSelector(),
		"Duration":           validate.Duration(),
		"StrictJSON":         validate.StrictJSON("x", func() any { return &struct{}{} }),
		"PEMCertificates":    validate.PEMCertificates(),
		"PEMCertificatesFor": validate.PEMCertificatesFor(path.MatchRoot("trust_domain")),
		"HostPort":           validate.HostPort(),
	} {
		if !strings.HasPrefix(v.Description(ctx), "value must be ") || !strings.HasPrefix(v.MarkdownDescription(ctx), "value must be ") {
			t.Errorf("%s: descriptions %q / %q do not read \"value must be ...\"", name, v.Description(ctx), v.MarkdownDescription(ctx))
		}
	}
}

func TestHostPort(t *testing.T) {
	const summary = "Invalid Address"
	runValidatorCases(t, validate.HostPort(), map[string]validatorCase{
		"service":  {value: types.StringValue("cert-manager-istio-csr.cert-manager.svc:443")},
		"ipv6":     {value: types.StringValue("[::1]:15012")},
		"no port":  {value: types.StringValue("istiod.istio-system.svc"), wantSummary: summary, wantDetail: []string{"missing port"}},
		"port 0":   {value: types.StringValue("istiod:0"), wantSummary: summary, wantDetail: []string{`port "0"`}},
		"bad port": {value: types.StringValue("istiod:https"), wantSummary: summary},
		"no host":  {value: types.StringValue(":443"), wantSummary: summary, wantDetail: []string{"host is empty"}},
	})
}
