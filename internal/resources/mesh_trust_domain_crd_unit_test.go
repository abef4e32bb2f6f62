package resources

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// meshCRDs names the published CRD and served version behind each kind.
var meshCRDs = map[string]struct{ name, version string }{
	meshKindKyma: {"istios.operator.kyma-project.io", "v1alpha2"},
	meshKindSail: {"istios.sailoperator.io", "v1"},
	meshKindKuma: {"meshtrusts.kuma.io", "v1alpha1"},
}

// meshCELAnswers says, for every CEL rule (by message) on a CRD node the
// resource writes to or below, how the provider deals with it. A rule the
// table does not answer fails the test, so a new upstream rule is noticed.
var meshCELAnswers = map[string]string{
	// Sail, spec: the resource never writes values.global.istioNamespace.
	"spec.values.global.istioNamespace must match spec.namespace": "not written",
	// Sail, meshConfig.caCertificates[]: stricter at plan time, exactly one
	// of pem and spiffe_bundle_url (stringvalidator.ExactlyOneOf).
	"At most one of [pem spiffeBundleUrl] should be set": "mirrored by ExactlyOneOf",
}

// fullMeshModel sets every attribute the kind can write.
func fullMeshModel(t *testing.T, kind string) (meshTrustDomainResourceModel, meshModel) {
	t.Helper()
	pem := "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
	m := meshConfig(kind, "default", "apps.example", types.ListNull(types.StringType), false)
	mesh := meshModel{Kind: types.StringValue(kind), Name: types.StringValue("default"), Namespace: types.StringNull(), KumaMesh: types.StringNull()}
	switch kind {
	case meshKindSail:
		m.TrustDomainAliases = strList("cluster.local")
		m.PreviousTrustDomains = strList("old.example")
		m.EffectiveTrustDomainAliases = strList("cluster.local", "old.example")
		entry := func(pemValue, url string) attr.Value {
			return types.ObjectValueMust(caCertificateAttrTypes(), map[string]attr.Value{
				"pem": optionalString(pemValue), "spiffe_bundle_url": optionalString(url),
				"trust_domains": strList("peer.example"), "cert_signers": strList("clusterissuers.cert-manager.io/ca"),
			})
		}
		m.CACertificates = types.ListValueMust(types.ObjectType{AttrTypes: caCertificateAttrTypes()},
			[]attr.Value{entry(pem, ""), entry("", "https://bundle.peer.example")})
		m.CAAddress = types.StringValue("istio-csr.cert-manager.svc:443")
	case meshKindKyma:
		mesh.Namespace = types.StringValue("kyma-system")
	case meshKindKuma:
		mesh.Namespace = types.StringValue("kuma-system")
		mesh.KumaMesh = types.StringValue("default")
		m.CABundles = strList(pem, pem)
	}
	m.Mesh = mesh.object()
	return m, mesh
}

// TestMeshTrustDomainWritesMatchUpstreamCRDs builds what the resource applies
// for each kind, with every attribute set, and holds each written field
// against the operator's published CRD: declared, same type, inside its enum,
// and every CEL rule on the way there answered; a MeshTrust the resource
// creates carries every field the CRD requires.
func TestMeshTrustDomainWritesMatchUpstreamCRDs(t *testing.T) {
	for _, kind := range meshKindNames() {
		t.Run(kind, func(t *testing.T) {
			root := upstreamMeshSchema(t, kind)
			m, mesh := fullMeshModel(t, kind)
			obj, diags := meshTrustDomainObjectFromModel(context.Background(), m, meshWrites{trustDomain: true, kumaMesh: true}, meshKinds[kind], mesh)
			if diags.HasError() {
				t.Fatal(diags)
			}
			spec, ok := obj.Object["spec"].(map[string]any)
			if !ok {
				t.Fatalf("the resource writes no spec: %v", obj.Object)
			}
			specNode := child(root, "spec")
			var written []string
			walkWritten(t, "spec", spec, specNode, []crdNodeAt{{"<root>", root}, {"spec", specNode}}, &written)
			sort.Strings(written)
			t.Logf("fields written: %s", strings.Join(written, ", "))
			if kind == meshKindKuma {
				// The resource creates MeshTrusts: what it sends must be complete.
				checkRequired(t, "spec", spec, specNode)
			}
		})
	}
}

type crdNodeAt struct {
	path string
	node map[string]any
}

func upstreamMeshSchema(t *testing.T, kind string) map[string]any {
	t.Helper()
	want := meshCRDs[kind]
	crd, err := harness.UpstreamCRD(want.name)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := crd["spec"].(map[string]any)
	if scoped := spec["scope"] == "Namespaced"; scoped != meshKinds[kind].kube.Namespaced {
		t.Errorf("%s scope %v, the provider treats it as namespaced=%v", want.name, spec["scope"], meshKinds[kind].kube.Namespaced)
	}
	root, err := harness.CRDVersionSchema(crd, want.version)
	if err != nil {
		t.Fatalf("%s: %v", want.name, err)
	}
	return root
}

func child(node map[string]any, name string) map[string]any {
	props, _ := node["properties"].(map[string]any)
	c, _ := props[name].(map[string]any)
	return c
}

// walkWritten checks value at path against node (nil: not declared), and the
// CEL rules of every node from the root down to it.
func walkWritten(t *testing.T, path string, value any, node map[string]any, trail []crdNodeAt, written *[]string) {
	t.Helper()
	if node == nil {
		t.Errorf("%s: written, but the released CRD does not declare it (server-side apply would fail with "+
			"\"field not declared in schema\")", path)
		return
	}
	for _, at := range trail {
		rules, _ := at.node["x-kubernetes-validations"].([]any)
		for _, r := range rules {
			rule, _ := r.(map[string]any)
			msg, _ := rule["message"].(string)
			text, _ := rule["rule"].(string)
			if _, ok := meshCELAnswers[msg]; !ok {
				t.Errorf("%s: CEL rule %q (%s) on %s is not answered by the provider", path, msg, text, at.path)
			}
			if strings.Contains(text, "oldSelf") {
				t.Errorf("%s: transition rule %q on %s: the provider has no RequiresReplace or plan-time check for it", path, text, at.path)
			}
		}
	}
	typ, _ := node["type"].(string)
	switch v := value.(type) {
	case map[string]any:
		if typ != "object" {
			t.Errorf("%s: written as an object, the CRD says %q", path, typ)
			return
		}
		for name, sub := range v {
			subNode := child(node, name)
			if subNode == nil {
				if extra, ok := node["additionalProperties"].(map[string]any); ok {
					subNode = extra
				}
			}
			walkWritten(t, path+"."+name, sub, subNode, append(slices.Clone(trail), crdNodeAt{path + "." + name, subNode}), written)
		}
	case []any:
		if typ != "array" {
			t.Errorf("%s: written as a list, the CRD says %q", path, typ)
			return
		}
		items, _ := node["items"].(map[string]any)
		for _, item := range v {
			walkWritten(t, path+"[]", item, items, append(slices.Clone(trail), crdNodeAt{path + "[]", items}), written)
		}
	case string:
		if typ != "string" {
			t.Errorf("%s: written as a string, the CRD says %q", path, typ)
		}
		if enum, ok := node["enum"].([]any); ok && !slices.Contains(enum, any(v)) {
			t.Errorf("%s: %q is not in the CRD's enum %v", path, v, enum)
		}
		if !slices.Contains(*written, path) {
			*written = append(*written, path)
		}
	default:
		t.Errorf("%s: the resource writes a %T, which this test does not know", path, value)
	}
}

// checkRequired reports required fields of node that value lacks, at every
// level the value has.
func checkRequired(t *testing.T, path string, value map[string]any, node map[string]any) {
	t.Helper()
	required, _ := node["required"].([]any)
	for _, r := range required {
		name, _ := r.(string)
		if _, ok := value[name]; !ok {
			t.Errorf("%s.%s: required by the CRD, not written", path, name)
		}
	}
	for name, sub := range value {
		switch v := sub.(type) {
		case map[string]any:
			checkRequired(t, path+"."+name, v, child(node, name))
		case []any:
			items, _ := child(node, name)["items"].(map[string]any)
			for _, item := range v {
				if m, ok := item.(map[string]any); ok {
					checkRequired(t, path+"."+name+"[]", m, items)
				}
			}
		}
	}
}

// TestMeshTrustDomainLimitsMatchUpstreamCRDs: the trust domain rules the
// provider applies at plan time accept nothing the CRDs refuse, at the edges
// of the CRDs' limits.
func TestMeshTrustDomainLimitsMatchUpstreamCRDs(t *testing.T) {
	kyma := child(child(child(upstreamMeshSchema(t, meshKindKyma), "spec"), "config"), "trustDomain")
	kuma := child(child(upstreamMeshSchema(t, meshKindKuma), "spec"), "trustDomain")
	sail := child(child(child(child(upstreamMeshSchema(t, meshKindSail), "spec"), "values"), "meshConfig"), "trustDomain")

	// go-spiffe's limit is the provider's for the Istio kinds; Kuma's is
	// checked by ValidateConfig against kumaMaxTrustDomainLen.
	const spiffeMax = 255
	if got := fmt.Sprint(kyma["maxLength"]); got != fmt.Sprint(spiffeMax) {
		t.Errorf("Kyma trustDomain maxLength %s, the provider allows %d", got, spiffeMax)
	}
	if got := fmt.Sprint(kyma["minLength"]); got != "1" {
		t.Errorf("Kyma trustDomain minLength %s, the provider refuses only the empty string", got)
	}
	if got := fmt.Sprint(kuma["maxLength"]); got != fmt.Sprint(kumaMaxTrustDomainLen) {
		t.Errorf("MeshTrust trustDomain maxLength %s, the provider checks %d", got, kumaMaxTrustDomainLen)
	}
	if sail["maxLength"] != nil || sail["pattern"] != nil {
		t.Errorf("Sail trustDomain gained limits %v/%v: mirror them", sail["maxLength"], sail["pattern"])
	}
	for _, name := range []string{"minItems", "maxItems"} {
		caBundles := child(child(upstreamMeshSchema(t, meshKindKuma), "spec"), "caBundles")
		if want := map[string]string{"minItems": "1", "maxItems": "<nil>"}[name]; fmt.Sprint(caBundles[name]) != want {
			t.Errorf("MeshTrust caBundles %s %v, the provider's ca_bundles expects %s", name, caBundles[name], want)
		}
	}

	pattern, _ := kyma["pattern"].(string)
	re, err := regexp.Compile(pattern)
	if err != nil {
		t.Fatalf("Kyma's pattern %q: %v", pattern, err)
	}
	// Trust domains go-spiffe accepts, at the edges of its character set.
	for _, td := range []string{"a", "cluster.local", "a_b.c-d", "0.1", "-a.b_", "a..b", strings.Repeat("z", spiffeMax)} {
		if _, err := spiffeid.TrustDomainFromString(td); err != nil {
			continue // not one the provider would send
		}
		if !re.MatchString(td) {
			t.Errorf("the provider accepts trust domain %q, Kyma's pattern %q refuses it", td, pattern)
		}
	}
}
