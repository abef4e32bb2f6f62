package resources

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
)

// These tests call ModifyPlan with the framework's own request and response
// types, because terraform-plugin-testing offers no way to see the warnings
// of a plan. The acceptance tests cover the same paths' effects on state and
// on the cluster.

type meshPlanCase struct {
	name string
	// prior is nil for a new resource.
	prior  *meshTrustDomainResourceModel
	config meshTrustDomainResourceModel

	wantWarning  []string // substrings of the one warning's detail; nil means no warning
	wantPrevious []string // nil: do not check
	wantAliases  []string // effective_trust_domain_aliases; nil: do not check
	wantUnknown  bool     // previous/effective planned unknown
	wantReplace  bool
	// wantTrustDomain, when not nil, is the planned trust_domain, and
	// wantPrefix the planned spiffe_id_prefix.
	wantTrustDomain *types.String
	wantPrefix      string
}

func meshValue(kind, name, namespace, kumaMesh string) types.Object {
	return meshModel{Kind: types.StringValue(kind), Name: optionalString(name), Namespace: optionalString(namespace),
		KumaMesh: optionalString(kumaMesh)}.object()
}

func strList(values ...string) types.List { return stringList(values) }

func tdPtr(v types.String) *types.String { return &v }

func withMesh(m meshTrustDomainResourceModel, mesh types.Object) meshTrustDomainResourceModel {
	m.Mesh = mesh
	return m
}

// meshConfig is a configuration: computed-only attributes null.
func meshConfig(kind, name, td string, aliases types.List, keep bool) meshTrustDomainResourceModel {
	return meshTrustDomainResourceModel{
		ID: types.StringNull(), Cluster: types.StringNull(), Mesh: meshValue(kind, name, "", ""),
		TrustDomain: optionalString(td), TrustDomainAliases: aliases, KeepPreviousAsAlias: types.BoolValue(keep),
		CACertificates: types.ListNull(types.ObjectType{AttrTypes: caCertificateAttrTypes()}), CAAddress: types.StringNull(),
		CABundles: types.ListNull(types.StringType), ForceConflicts: types.BoolValue(false),
		SPIFFEIDPrefix: types.StringNull(), PreviousTrustDomains: types.ListNull(types.StringType),
		EffectiveTrustDomainAliases: types.ListNull(types.StringType),
	}
}

// meshState is what an earlier apply stored.
func meshState(kind, namespace, td string, aliases types.List, keep bool, previous, effective types.List) *meshTrustDomainResourceModel {
	m := meshConfig(kind, "default", td, aliases, keep)
	m.Mesh = meshValue(kind, "default", namespace, "")
	m.ID = types.StringValue(kind + ":default")
	m.SPIFFEIDPrefix = types.StringValue("spiffe://" + td + "/")
	m.PreviousTrustDomains, m.EffectiveTrustDomainAliases = previous, effective
	return &m
}

func kumaState(td string) *meshTrustDomainResourceModel {
	m := meshState(meshKindKuma, "kuma-system", td, types.ListNull(types.StringType), false, types.ListNull(types.StringType), types.ListNull(types.StringType))
	m.Mesh = meshValue(meshKindKuma, "default", "kuma-system", "default")
	return m
}

func TestMeshTrustDomainModifyPlan(t *testing.T) {
	noAliases := types.ListNull(types.StringType)
	cases := []meshPlanCase{
		{
			name:         "sail change without alias warns",
			prior:        meshState(meshKindSail, "", "old.example", noAliases, false, strList(), strList()),
			config:       meshConfig(meshKindSail, "", "new.example", noAliases, false),
			wantWarning:  []string{`from "old.example" to "new.example"`, "keep_previous_as_alias = true", `add "old.example" to trust_domain_aliases`},
			wantPrevious: []string{}, wantAliases: []string{},
		},
		{
			name:         "sail change keeping the previous domain",
			prior:        meshState(meshKindSail, "", "old.example", noAliases, true, strList(), strList()),
			config:       meshConfig(meshKindSail, "", "new.example", noAliases, true),
			wantPrevious: []string{"old.example"}, wantAliases: []string{"old.example"},
		},
		{
			name:         "sail change with the old domain as configured alias",
			prior:        meshState(meshKindSail, "", "old.example", noAliases, false, strList(), strList()),
			config:       meshConfig(meshKindSail, "", "new.example", strList("old.example"), false),
			wantPrevious: []string{}, wantAliases: []string{"old.example"},
		},
		{
			name:         "second migration keeps both and configured aliases first",
			prior:        meshState(meshKindSail, "", "b.example", strList("x.example"), true, strList("a.example"), strList("x.example", "a.example")),
			config:       meshConfig(meshKindSail, "", "c.example", strList("x.example"), true),
			wantPrevious: []string{"a.example", "b.example"}, wantAliases: []string{"x.example", "a.example", "b.example"},
		},
		{
			name:         "returning to a kept domain drops it from the aliases",
			prior:        meshState(meshKindSail, "", "b.example", noAliases, true, strList("a.example"), strList("a.example")),
			config:       meshConfig(meshKindSail, "", "a.example", noAliases, true),
			wantPrevious: []string{"b.example"}, wantAliases: []string{"b.example"},
		},
		{
			name:         "turning keep off ends the migration without a warning",
			prior:        meshState(meshKindSail, "", "b.example", noAliases, true, strList("a.example"), strList("a.example")),
			config:       meshConfig(meshKindSail, "", "b.example", noAliases, false),
			wantPrevious: []string{}, wantAliases: []string{},
		},
		{
			name:         "unchanged domain does not warn",
			prior:        meshState(meshKindSail, "", "a.example", noAliases, false, strList(), strList()),
			config:       meshConfig(meshKindSail, "", "a.example", noAliases, false),
			wantPrevious: []string{}, wantAliases: []string{},
		},
		{
			name:        "default trust domain counts as the old one",
			prior:       meshState(meshKindSail, "", "", noAliases, false, strList(), strList()),
			config:      meshConfig(meshKindSail, "", "apps.example", noAliases, false),
			wantWarning: []string{`from "cluster.local" to "apps.example"`},
		},
		{
			name:        "kyma change always warns",
			prior:       meshState(meshKindKyma, "kyma-system", "old.example", noAliases, false, types.ListNull(types.StringType), types.ListNull(types.StringType)),
			config:      meshConfig(meshKindKyma, "", "new.example", noAliases, false),
			wantWarning: []string{`from "old.example" to "new.example"`, "Kyma Istio module has no trust domain aliases"},
		},
		{
			name:        "kuma MeshTrust changing its trust domain in place warns",
			prior:       kumaState("old.example"),
			config:      meshConfig(meshKindKuma, "default", "new.example", noAliases, false),
			wantWarning: []string{`will hold the CA bundles of "new.example" instead of "old.example"`, `stops accepting certificates of "old.example"`},
		},
		{
			// Imported from an object without a trust domain: the field is
			// not the resource's, so the plan keeps what the object holds.
			name:         "unset trust domain the object lacks stays unset",
			prior:        meshState(meshKindSail, "", "", noAliases, false, strList(), strList()),
			config:       meshConfig(meshKindSail, "", "", noAliases, false),
			wantPrevious: []string{}, wantAliases: []string{},
			wantTrustDomain: tdPtr(types.StringNull()), wantPrefix: "spiffe://cluster.local/",
		},
		{
			name:            "unset trust domain another manager set stays",
			prior:           meshState(meshKindKyma, "kyma-system", "theirs.example", noAliases, false, types.ListNull(types.StringType), types.ListNull(types.StringType)),
			config:          meshConfig(meshKindKyma, "", "", noAliases, false),
			wantTrustDomain: tdPtr(types.StringValue("theirs.example")), wantPrefix: "spiffe://theirs.example/",
		},
		{
			name:   "kuma mesh label changes in place",
			prior:  kumaState("peer.example"),
			config: withMesh(meshConfig(meshKindKuma, "default", "peer.example", noAliases, false), meshValue(meshKindKuma, "default", "", "other")),
		},
		{
			name:        "another mesh object replaces the resource",
			prior:       meshState(meshKindSail, "", "a.example", noAliases, false, strList(), strList()),
			config:      meshConfig(meshKindSail, "other", "a.example", noAliases, false),
			wantReplace: true,
		},
		{
			// The provider has no connection, so the mesh cannot be asked
			// which trust domain it runs on: the apply works it out.
			name:        "new resource keeping the previous domain without a cluster",
			config:      meshConfig(meshKindSail, "", "a.example", noAliases, true),
			wantUnknown: true,
		},
		{
			name:         "new resource without keep needs no cluster",
			config:       meshConfig(meshKindSail, "", "a.example", strList("b.example"), false),
			wantPrevious: []string{}, wantAliases: []string{"b.example"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := runMeshModifyPlan(t, tc.prior, tc.config)
			checkMeshPlanDiagnostics(t, resp.Diagnostics, tc.wantWarning)
			var plan meshTrustDomainResourceModel
			if d := resp.Plan.Get(context.Background(), &plan); d.HasError() {
				t.Fatal(d)
			}
			if tc.wantUnknown {
				if !plan.PreviousTrustDomains.IsUnknown() || !plan.EffectiveTrustDomainAliases.IsUnknown() {
					t.Errorf("previous = %v, effective = %v, want both unknown", plan.PreviousTrustDomains, plan.EffectiveTrustDomainAliases)
				}
			}
			if tc.wantPrevious != nil && !plan.PreviousTrustDomains.Equal(stringList(tc.wantPrevious)) {
				t.Errorf("previous_trust_domains = %v, want %v", plan.PreviousTrustDomains, tc.wantPrevious)
			}
			if tc.wantAliases != nil && !plan.EffectiveTrustDomainAliases.Equal(stringList(tc.wantAliases)) {
				t.Errorf("effective_trust_domain_aliases = %v, want %v", plan.EffectiveTrustDomainAliases, tc.wantAliases)
			}
			replaced := len(resp.RequiresReplace) == 1 && resp.RequiresReplace[0].Equal(path.Root("mesh"))
			if replaced != tc.wantReplace {
				t.Errorf("RequiresReplace = %v, want replace %v", resp.RequiresReplace, tc.wantReplace)
			}
			if tc.wantTrustDomain != nil && !plan.TrustDomain.Equal(*tc.wantTrustDomain) {
				t.Errorf("trust_domain = %v, want %v", plan.TrustDomain, *tc.wantTrustDomain)
			}
			want := tc.wantPrefix
			if want == "" {
				want = "spiffe://" + plan.TrustDomain.ValueString() + "/"
			}
			if plan.SPIFFEIDPrefix.ValueString() != want {
				t.Errorf("spiffe_id_prefix = %v, want %q", plan.SPIFFEIDPrefix, want)
			}
		})
	}
}

// TestMeshTrustDomainModifyPlanDefaults: what a new resource plans for the
// attributes left out. Fields the resource does not write (an unset trust
// domain, an unset Kuma mesh label) are whatever the object holds, known
// after the apply; nothing defaults to a value the provider would send.
func TestMeshTrustDomainModifyPlanDefaults(t *testing.T) {
	kumaMesh := types.ObjectValueMust(meshAttrTypes(), map[string]attr.Value{
		"kind": types.StringValue(meshKindKuma), "name": types.StringValue("west-example-1-com"),
		"namespace": types.StringValue("kuma-system"), "kuma_mesh": types.StringUnknown(),
	})
	for _, tc := range []struct {
		kind, td          string
		wantID            string
		wantMesh          types.Object
		wantTrustDomain   types.String
		wantPreviousIsNil bool
	}{
		{kind: meshKindSail, wantID: "istio_sail:default", wantMesh: meshValue(meshKindSail, "default", "", ""), wantTrustDomain: types.StringUnknown()},
		{kind: meshKindKyma, td: "apps.example", wantID: "istio_kyma:kyma-system:default",
			wantMesh: meshValue(meshKindKyma, "default", "kyma-system", ""), wantTrustDomain: types.StringValue("apps.example"), wantPreviousIsNil: true},
		{kind: meshKindKuma, td: "west.example_1.com", wantID: "kuma:kuma-system:west-example-1-com",
			wantMesh: kumaMesh, wantTrustDomain: types.StringValue("west.example_1.com"), wantPreviousIsNil: true},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			config := meshConfig(tc.kind, "", tc.td, types.ListNull(types.StringType), false)
			resp := runMeshModifyPlan(t, nil, config)
			checkMeshPlanDiagnostics(t, resp.Diagnostics, nil)
			var plan meshTrustDomainResourceModel
			if d := resp.Plan.Get(context.Background(), &plan); d.HasError() {
				t.Fatal(d)
			}
			if plan.ID.ValueString() != tc.wantID || !plan.Mesh.Equal(tc.wantMesh) || !plan.TrustDomain.Equal(tc.wantTrustDomain) {
				t.Errorf("planned id %v, mesh %v, trust domain %v; want %q, %v, %v", plan.ID, plan.Mesh, plan.TrustDomain, tc.wantID, tc.wantMesh, tc.wantTrustDomain)
			}
			if tc.wantTrustDomain.IsUnknown() != plan.SPIFFEIDPrefix.IsUnknown() {
				t.Errorf("spiffe_id_prefix = %v with trust domain %v", plan.SPIFFEIDPrefix, plan.TrustDomain)
			}
			if tc.wantPreviousIsNil != plan.PreviousTrustDomains.IsNull() {
				t.Errorf("previous_trust_domains = %v", plan.PreviousTrustDomains)
			}
		})
	}
}

func runMeshModifyPlan(t *testing.T, prior *meshTrustDomainResourceModel, config meshTrustDomainResourceModel) *resource.ModifyPlanResponse {
	t.Helper()
	ctx := context.Background()
	r := &meshTrustDomainResource{}
	r.Data = &providerdata.Data{Clusters: kube.NewClusters(kube.Settings{})}
	var schemaResp resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &schemaResp)
	s := schemaResp.Schema

	encode := func(m meshTrustDomainResourceModel) tfsdk.State {
		st := tfsdk.State{Schema: s}
		if d := st.Set(ctx, &m); d.HasError() {
			t.Fatal(d)
		}
		return st
	}
	// Terraform's proposed plan: the configuration, with computed values
	// from the prior state (or unknown for a new resource), as the framework
	// passes it to ModifyPlan.
	proposed := config
	unknownList := types.ListUnknown(types.StringType)
	if prior == nil {
		proposed.ID, proposed.SPIFFEIDPrefix = types.StringUnknown(), types.StringUnknown()
		proposed.PreviousTrustDomains, proposed.EffectiveTrustDomainAliases = unknownList, unknownList
		if config.TrustDomain.IsNull() {
			proposed.TrustDomain = types.StringUnknown()
		}
		proposed.Mesh = withUnknownMeshDefaults(config.Mesh)
	} else {
		proposed.ID, proposed.SPIFFEIDPrefix = prior.ID, types.StringUnknown()
		proposed.PreviousTrustDomains, proposed.EffectiveTrustDomainAliases = unknownList, unknownList
		proposed.Mesh = withUnknownMeshDefaults(config.Mesh)
	}
	req := resource.ModifyPlanRequest{
		Config: tfsdk.Config{Schema: s, Raw: encode(config).Raw},
		Plan:   tfsdk.Plan{Schema: s, Raw: encode(proposed).Raw},
		State:  tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)},
	}
	if prior != nil {
		req.State = encode(*prior)
	}
	resp := &resource.ModifyPlanResponse{Plan: req.Plan}
	r.ModifyPlan(ctx, req, resp)
	return resp
}

func withUnknownMeshDefaults(mesh types.Object) types.Object {
	attrs := map[string]attr.Value{}
	for k, v := range mesh.Attributes() {
		attrs[k] = v
		if k != "kind" && v.IsNull() {
			attrs[k] = types.StringUnknown()
		}
	}
	return types.ObjectValueMust(meshAttrTypes(), attrs)
}

func checkMeshPlanDiagnostics(t *testing.T, diags diag.Diagnostics, wantWarning []string) {
	t.Helper()
	if diags.HasError() {
		t.Fatalf("unexpected errors: %v", diags)
	}
	if wantWarning == nil {
		if len(diags) != 0 {
			t.Fatalf("unexpected diagnostics: %v", diags)
		}
		return
	}
	if len(diags) != 1 || diags.WarningsCount() != 1 || diags[0].Summary() != "Trust Domain Change" {
		t.Fatalf("want one \"Trust Domain Change\" warning, got %v", diags)
	}
	for _, want := range wantWarning {
		if !strings.Contains(diags[0].Detail(), want) {
			t.Errorf("warning %q lacks %q", diags[0].Detail(), want)
		}
	}
}

func TestParseMeshKey(t *testing.T) {
	for key, want := range map[string]types.Object{
		"istio_sail":                  meshValue(meshKindSail, "default", "", ""),
		"istio_sail:mesh-a":           meshValue(meshKindSail, "mesh-a", "", ""),
		"istio_kyma":                  meshValue(meshKindKyma, "default", "kyma-system", ""),
		"istio_kyma:kyma-system:main": meshValue(meshKindKyma, "main", "kyma-system", ""),
		"kuma:kuma-system:west-org":   meshValue(meshKindKuma, "west-org", "kuma-system", ""),
	} {
		got, err := parseMeshKey(key)
		if err != nil || !got.object().Equal(want) {
			t.Errorf("parseMeshKey(%q) = %v, %v; want %v", key, got.object(), err, want)
		}
	}
	for _, key := range []string{"kuma", "linkerd:default", "istio_sail:ns:name", "istio_kyma:name", "kuma:kuma-system:", ""} {
		if _, err := parseMeshKey(key); err == nil {
			t.Errorf("parseMeshKey(%q) accepted", key)
		}
	}
}

func TestOthersOwnAny(t *testing.T) {
	othersOwnAny := func(obj *unstructured.Unstructured, manager string, paths ...[]string) bool {
		return managerOf(manager).others().holds(obj, paths...)
	}
	obj := &unstructured.Unstructured{}
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "zerotrust", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:trustDomain":{},"f:caBundles":{}}}`)}},
		{Manager: "operator", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}},"f:spec":{"f:caBundles":{}}}`)}},
	})
	if !othersOwnAny(obj, "zerotrust", []string{"spec", "trustDomain"}, []string{"spec", "caBundles"}) {
		t.Error("the operator's share of spec.caBundles was not seen")
	}
	if othersOwnAny(obj, "zerotrust", []string{"spec", "trustDomain"}) {
		t.Error("spec.trustDomain is only zerotrust's")
	}
	if othersOwnAny(obj, "operator", []string{"metadata", "labels", kumaMeshLabel}) {
		t.Error("nobody owns the kuma.io/mesh label")
	}
	if !managerOf("zerotrust").holds(obj, kumaMeshLabelPath, kumaCABundlesPath) {
		t.Error("zerotrust's share of spec.caBundles was not seen")
	}
}

// TestSchemasDescribeEveryAttribute: the docs are generated from the
// schemas, so every attribute must say what it is.
func TestSchemasDescribeEveryAttribute(t *testing.T) {
	for name, r := range map[string]resource.Resource{"istio_csr": NewIstioCSRResource(), "mesh_trust_domain": NewMeshTrustDomainResource()} {
		var resp resource.SchemaResponse
		r.Schema(context.Background(), resource.SchemaRequest{}, &resp)
		if resp.Schema.MarkdownDescription == "" {
			t.Errorf("%s: the schema has no description", name)
		}
		var walk func(prefix string, attrs map[string]schema.Attribute)
		walk = func(prefix string, attrs map[string]schema.Attribute) {
			for attrName, a := range attrs {
				if a.GetMarkdownDescription() == "" {
					t.Errorf("%s: attribute %s%s has no MarkdownDescription", name, prefix, attrName)
				}
				if nested, ok := a.(schema.NestedAttribute); ok {
					children := map[string]schema.Attribute{}
					for childName, child := range nested.GetNestedObject().GetAttributes() {
						if c, ok := child.(schema.Attribute); ok {
							children[childName] = c
						}
					}
					walk(prefix+attrName+".", children)
				}
			}
		}
		walk("", resp.Schema.Attributes)
	}
}
