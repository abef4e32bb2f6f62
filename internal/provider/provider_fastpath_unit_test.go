package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// TestFastUpgradeAnswersAsTheFramework: for a state of the schema's own
// version, every fast path's UpgradeResourceState gives the framework's
// answer byte for byte (an attribute the schema no longer has is dropped,
// the ones the state lacks become null), and it leaves every other version
// and an undecodable state to the framework.
func TestFastUpgradeAnswersAsTheFramework(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	framework := providerserver.NewProtocol6(p)()
	fast := FastPaths(p)
	if len(fast) == 0 {
		t.Fatal("the provider has no fast paths")
	}
	schemas, err := framework.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	state := []byte(`{"id":"east/peer","cluster":"east","name":"peer","trust_domain":"peer.example.org",` +
		`"bundle_endpoint_url":"https://peer.example.org:8443",` +
		`"bundle_endpoint_profile":{"type":"https_spiffe","endpoint_spiffe_id":"spiffe://peer.example.org/spire/server"},` +
		`"an_attribute_no_schema_has":"dropped"}`)
	for typeName, fp := range fast {
		s, ok := schemas.ResourceSchemas[typeName]
		if !ok {
			t.Fatalf("%s: no schema", typeName)
		}
		req := &tfprotov6.UpgradeResourceStateRequest{TypeName: typeName, Version: s.Version, RawState: &tfprotov6.RawState{JSON: state}}
		want, err := framework.UpgradeResourceState(ctx, req)
		if err != nil || len(want.Diagnostics) > 0 {
			t.Fatalf("%s: the framework's answer: %v %v", typeName, err, want.Diagnostics)
		}
		got, ok := fp.UpgradeResourceState(ctx, req)
		if !ok {
			t.Fatalf("%s: the fast path declined a state of the schema's version", typeName)
		}
		if string(got.UpgradedState.MsgPack) != string(want.UpgradedState.MsgPack) || len(got.Diagnostics) > 0 {
			t.Errorf("%s: the fast path's upgraded state differs from the framework's", typeName)
		}
		for name, other := range map[string]*tfprotov6.UpgradeResourceStateRequest{
			"another version":    {TypeName: typeName, Version: s.Version + 1, RawState: req.RawState},
			"an undecodable one": {TypeName: typeName, Version: s.Version, RawState: &tfprotov6.RawState{JSON: []byte(`{"id":{"an":"object"}}`)}},
			"no state":           {TypeName: typeName, Version: s.Version},
		} {
			if _, ok := fp.UpgradeResourceState(ctx, other); ok {
				t.Errorf("%s: the fast path answered %s", typeName, name)
			}
		}
	}
}
