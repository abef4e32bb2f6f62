package validate_test

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func TestDomainName(t *testing.T) {
	const summary = "Invalid Domain Name"
	label63 := strings.Repeat("a", 63)
	runValidatorCases(t, validate.DomainName(), map[string]validatorCase{
		"null":             {value: types.StringNull()},
		"unknown":          {value: types.StringUnknown()},
		"two labels":       {value: types.StringValue("example.com")},
		"deep":             {value: types.StringValue("apps.east.example.com")},
		"digits and dash":  {value: types.StringValue("1-apps.example.io")},
		"63 char label":    {value: types.StringValue(label63 + ".example.com")},
		"253 characters":   {value: types.StringValue(strings.Repeat(label63+".", 3) + strings.Repeat("a", 61))},
		"254 characters":   {value: types.StringValue(strings.Repeat(label63+".", 3) + strings.Repeat("a", 62)), wantSummary: summary, wantDetail: []string{"254 characters", "at most 253"}},
		"64 char label":    {value: types.StringValue(label63 + "a.example.com"), wantSummary: summary, wantDetail: []string{"64 characters", "at most 63"}},
		"uppercase":        {value: types.StringValue("Apps.Example.com"), wantSummary: summary, wantDetail: []string{"lowercase", `"apps.example.com"`}},
		"trailing dot":     {value: types.StringValue("apps.example.com."), wantSummary: summary, wantDetail: []string{"trailing dot", `"apps.example.com"`}},
		"wildcard":         {value: types.StringValue("*.apps.example.com"), wantSummary: summary, wantDetail: []string{"wildcard", "verify apps.example.com"}},
		"single label":     {value: types.StringValue("localhost"), wantSummary: summary, wantDetail: []string{"single label"}},
		"empty":            {value: types.StringValue(""), wantSummary: summary, wantDetail: []string{"empty"}},
		"empty label":      {value: types.StringValue("apps..example.com"), wantSummary: summary, wantDetail: []string{"empty label"}},
		"leading dot":      {value: types.StringValue(".example.com"), wantSummary: summary, wantDetail: []string{"empty label"}},
		"underscore":       {value: types.StringValue("_dmarc.example.com"), wantSummary: summary, wantDetail: []string{"underscore"}},
		"leading dash":     {value: types.StringValue("-apps.example.com"), wantSummary: summary, wantDetail: []string{"dash"}},
		"bad character":    {value: types.StringValue("apps!.example.com"), wantSummary: summary, wantDetail: []string{"letters, digits and dashes"}},
		"url":              {value: types.StringValue("https://apps.example.com"), wantSummary: summary, wantDetail: []string{"scheme"}},
		"with port":        {value: types.StringValue("apps.example.com:443"), wantSummary: summary, wantDetail: []string{"port"}},
		"ip address":       {value: types.StringValue("192.0.2.1"), wantSummary: summary, wantDetail: []string{"IP address"}},
		"numeric last one": {value: types.StringValue("apps.123"), wantSummary: summary, wantDetail: []string{"all digits"}},
	})
}

func TestNameserverAddress(t *testing.T) {
	const summary = "Invalid Nameserver Address"
	runValidatorCases(t, validate.NameserverAddress(), map[string]validatorCase{
		"null":            {value: types.StringNull()},
		"unknown":         {value: types.StringUnknown()},
		"host and port":   {value: types.StringValue("ns1.example.com:53")},
		"fqdn and port":   {value: types.StringValue("ns1.example.com.:5353")},
		"host alone":      {value: types.StringValue("ns1.example.com")},
		"ipv4 and port":   {value: types.StringValue("127.0.0.1:5353")},
		"ipv4 alone":      {value: types.StringValue("192.0.2.1")},
		"ipv6 and port":   {value: types.StringValue("[2001:db8::1]:53")},
		"ipv6 alone":      {value: types.StringValue("2001:db8::1")},
		"port 0":          {value: types.StringValue("127.0.0.1:0"), wantSummary: summary, wantDetail: []string{"1 to 65535"}},
		"port too big":    {value: types.StringValue("127.0.0.1:65536"), wantSummary: summary, wantDetail: []string{"1 to 65535"}},
		"port not number": {value: types.StringValue("ns1.example.com:dns"), wantSummary: summary, wantDetail: []string{"1 to 65535"}},
		"bad host":        {value: types.StringValue("ns_1.example.com:53"), wantSummary: summary, wantDetail: []string{"neither an IP address nor a host name"}},
		"url":             {value: types.StringValue("udp://127.0.0.1:53"), wantSummary: summary},
		"empty":           {value: types.StringValue(""), wantSummary: summary},
	})
}
