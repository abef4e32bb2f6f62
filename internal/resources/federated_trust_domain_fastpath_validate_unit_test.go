package resources_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle/bundletest"
)

// TestFederatedTrustDomainFastValidateSameAnswers asks the framework and the
// fast path (fastpath.Validation) to check the same configurations of
// zerotrust_federated_trust_domain: valid ones, which the fast path must
// answer (else it is dead weight), and ones each validator, the read-only
// and required checks and ValidateConfig refuse, which it must leave to the
// framework. The fast path may only ever answer "no diagnostics", and only
// where the framework says the same.
func TestFederatedTrustDomainFastValidateSameAnswers(t *testing.T) {
	ctx := context.Background()
	p := provider.New("test")()
	framework := providerserver.NewProtocol6(p)()
	fast := provider.FastPaths(p)[ftdType]
	if fast == nil {
		t.Fatalf("no fast path for %s", ftdType)
	}
	schemas, err := framework.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	typ, ok := schemas.ResourceSchemas[ftdType].ValueType().(tftypes.Object)
	if !ok {
		t.Fatalf("schema type %T", schemas.ResourceSchemas[ftdType].ValueType())
	}
	profileType, _ := typ.AttributeTypes["bundle_endpoint_profile"].(tftypes.Object)
	serverType, _ := typ.AttributeTypes["spire_server"].(tftypes.Object)
	timeoutsType, _ := typ.AttributeTypes["timeouts"].(tftypes.Object)
	str := func(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
	unknown := func(t tftypes.Type) tftypes.Value { return tftypes.NewValue(t, tftypes.UnknownValue) }
	object := func(t tftypes.Object, set map[string]tftypes.Value) tftypes.Value {
		attrs := map[string]tftypes.Value{}
		for name, at := range t.AttributeTypes {
			attrs[name] = tftypes.NewValue(at, nil)
			if v, ok := set[name]; ok {
				attrs[name] = v
			}
		}
		return tftypes.NewValue(t, attrs)
	}
	profile := func(typ, id string) tftypes.Value {
		set := map[string]tftypes.Value{"type": str(typ)}
		if id != "" {
			set["endpoint_spiffe_id"] = str(id)
		}
		return object(profileType, set)
	}
	now := time.Now()
	td := spiffeid.RequireTrustDomainFromString("peer.test")
	good := bundletest.BundleJSON(t, td, bundletest.NewCA(t, td, now.Add(-time.Hour), now.Add(24*time.Hour)))
	foreign := bundletest.BundleJSON(t, td, bundletest.NewCA(t, spiffeid.RequireTrustDomainFromString("other.test"), now.Add(-time.Hour), now.Add(time.Hour)))
	base := map[string]tftypes.Value{
		"cluster":                 str("c1"),
		"trust_domain":            str("peer.test"),
		"bundle_endpoint_url":     str("https://spire.peer.test:8443"),
		"bundle_endpoint_profile": profile("https_spiffe", "spiffe://peer.test/spire/server"),
	}
	with := func(changes map[string]tftypes.Value) tftypes.Value {
		set := map[string]tftypes.Value{}
		for k, v := range base {
			set[k] = v
		}
		for k, v := range changes {
			set[k] = v
		}
		return object(typ, set)
	}
	valid := map[string]tftypes.Value{
		"the bench's configuration": with(map[string]tftypes.Value{"delete_bundle_on_destroy": tftypes.NewValue(tftypes.Bool, false)}),
		"everything set": with(map[string]tftypes.Value{
			"name": str("peer-test"), "trust_domain_bundle": str(good), "class_name": str(""), "force_conflicts": tftypes.NewValue(tftypes.Bool, true),
			"wait_for_bundle": tftypes.NewValue(tftypes.Bool, true), "check_spire": tftypes.NewValue(tftypes.Bool, false),
			"spire_server": object(serverType, map[string]tftypes.Value{"namespace": str("spire"), "pod": str("spire-server-0"), "container": str("server")}),
			"timeouts":     object(timeoutsType, map[string]tftypes.Value{"create": str("5m"), "delete": str("90s")}),
		}),
		"https_web": with(map[string]tftypes.Value{"bundle_endpoint_profile": profile("https_web", "")}),
		"https_web from S3": with(map[string]tftypes.Value{"bundle_endpoint_profile": profile("https_web", ""),
			"bundle_endpoint_url": str("https://b.s3.eu-west-1.amazonaws.com/peer.json")}),
		"unknown values":            with(map[string]tftypes.Value{"trust_domain": unknown(tftypes.String), "name": unknown(tftypes.String), "trust_domain_bundle": unknown(tftypes.String)}),
		"unknown profile":           with(map[string]tftypes.Value{"bundle_endpoint_profile": unknown(profileType)}),
		"unknown nested":            with(map[string]tftypes.Value{"bundle_endpoint_profile": object(profileType, map[string]tftypes.Value{"type": unknown(tftypes.String)})}),
		"unknown timeouts block":    with(map[string]tftypes.Value{"timeouts": unknown(timeoutsType)}),
		"unknown spire_server":      with(map[string]tftypes.Value{"spire_server": unknown(serverType)}),
		"empty spire_server object": with(map[string]tftypes.Value{"spire_server": object(serverType, nil)}),
		// Cluster keys are checked at plan, against the provider's clusters.
		"empty cluster key": with(map[string]tftypes.Value{"cluster": str("")}),
	}
	invalid := map[string]tftypes.Value{
		"bad trust domain":             with(map[string]tftypes.Value{"trust_domain": str("Peer.test")}),
		"trust domain with scheme":     with(map[string]tftypes.Value{"trust_domain": str("spiffe://peer.test")}),
		"http url":                     with(map[string]tftypes.Value{"bundle_endpoint_url": str("http://spire.peer.test")}),
		"url with user info":           with(map[string]tftypes.Value{"bundle_endpoint_url": str("https://u:p@spire.peer.test")}),
		"bad profile type":             with(map[string]tftypes.Value{"bundle_endpoint_profile": profile("mtls", "spiffe://peer.test/spire/server")}),
		"bad endpoint SPIFFE ID":       with(map[string]tftypes.Value{"bundle_endpoint_profile": profile("https_spiffe", "https://peer.test/x")}),
		"https_spiffe without ID":      with(map[string]tftypes.Value{"bundle_endpoint_profile": profile("https_spiffe", "")}),
		"https_web with ID":            with(map[string]tftypes.Value{"bundle_endpoint_profile": profile("https_web", "spiffe://peer.test/spire/server")}),
		"https_spiffe from GCS":        with(map[string]tftypes.Value{"bundle_endpoint_url": str("https://storage.googleapis.com/b/peer.json")}),
		"bundle not JSON":              with(map[string]tftypes.Value{"trust_domain_bundle": str("not a bundle")}),
		"bundle of another domain":     with(map[string]tftypes.Value{"trust_domain_bundle": str(foreign)}),
		"bad object name":              with(map[string]tftypes.Value{"name": str("Bad_Name")}),
		"bad spire_server namespace":   with(map[string]tftypes.Value{"spire_server": object(serverType, map[string]tftypes.Value{"namespace": str("Not A Label")})}),
		"bad spire_server pod":         with(map[string]tftypes.Value{"spire_server": object(serverType, map[string]tftypes.Value{"pod": str("Pod_0")})}),
		"bad timeout":                  with(map[string]tftypes.Value{"timeouts": object(timeoutsType, map[string]tftypes.Value{"update": str("soon")})}),
		"read-only spire_trust set":    with(map[string]tftypes.Value{"spire_trust": str("federated")}),
		"read-only id set":             with(map[string]tftypes.Value{"id": str("c1/x")}),
		"required trust_domain null":   with(map[string]tftypes.Value{"trust_domain": tftypes.NewValue(tftypes.String, nil)}),
		"required nested type null":    with(map[string]tftypes.Value{"bundle_endpoint_profile": object(profileType, map[string]tftypes.Value{"endpoint_spiffe_id": str("spiffe://peer.test/spire/server")})}),
		"required profile null":        with(map[string]tftypes.Value{"bundle_endpoint_profile": tftypes.NewValue(profileType, nil)}),
		"config of another type":       tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"x": tftypes.String}}, map[string]tftypes.Value{"x": str("y")}),
		"null configuration":           tftypes.NewValue(typ, nil),
		"unknown configuration":        unknown(typ),
		"bad URL and bad trust domain": with(map[string]tftypes.Value{"bundle_endpoint_url": str("ftp://x"), "trust_domain": str("-")}),
	}
	check := func(name string, config tftypes.Value, wantValid bool) {
		t.Run(name, func(t *testing.T) {
			dv, err := tfprotov6.NewDynamicValue(config.Type(), config)
			if err != nil {
				t.Fatal(err)
			}
			req := &tfprotov6.ValidateResourceConfigRequest{TypeName: ftdType, Config: &dv}
			want, err := framework.ValidateResourceConfig(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, answered := fast.ValidateResourceConfig(ctx, req)
			if wantValid != (len(want.Diagnostics) == 0) {
				t.Fatalf("the framework's answer is not what the case expects (valid: %v): %s", wantValid, diagsText(want.Diagnostics))
			}
			switch {
			case answered && len(want.Diagnostics) > 0:
				t.Fatalf("the fast path said valid; the framework says: %s", diagsText(want.Diagnostics))
			case answered && len(got.Diagnostics) > 0:
				t.Fatalf("the fast path answered with diagnostics: %s", diagsText(got.Diagnostics))
			case !answered && wantValid:
				t.Fatalf("the fast path left a valid configuration to the framework")
			}
		})
	}
	for name, config := range valid {
		check("valid/"+name, config, true)
	}
	for name, config := range invalid {
		check("invalid/"+name, config, false)
	}
}

func diagsText(diags []*tfprotov6.Diagnostic) string {
	out := ""
	for _, d := range diags {
		out += fmt.Sprintf("[%v %q %q at %v] ", d.Severity, d.Summary, d.Detail, d.Attribute)
	}
	return out
}
