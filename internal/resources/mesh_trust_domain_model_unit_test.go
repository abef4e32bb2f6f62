package resources

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The import ID string and the import identity name the same objects, with
// the same defaults.
func TestMeshImportIDAndIdentity(t *testing.T) {
	for id, want := range map[string]objectIdentity{
		"istio_sail":                      {Kind: "istio_sail", Name: "default"},
		"east/istio_sail:mesh":            {Cluster: "east", Kind: "istio_sail", Name: "mesh"},
		"istio_kyma":                      {Kind: "istio_kyma", Namespace: "kyma-system", Name: "default"},
		"a/b/kuma:kuma-system:west-trust": {Cluster: "a/b", Kind: "kuma", Namespace: "kuma-system", Name: "west-trust"},
	} {
		got, err := meshTrustDomainType.importID.parse(id)
		if err != nil || got != want {
			t.Errorf("parseMeshTrustDomainImportID(%q) = %+v, %v; want %+v", id, got, err, want)
			continue
		}
		kind, mesh, err := meshFromIdentity(got)
		if err != nil || kind.name != want.Kind || meshTrustDomainObjectIdentity(clusterValue(got.Cluster), mesh) != want {
			t.Errorf("meshFromIdentity(%+v) = %s, %v; want the same object", got, mesh.key(), err)
		}
	}
	// An identity may leave the kind's default namespace and name empty.
	if _, mesh, err := meshFromIdentity(objectIdentity{Kind: "istio_kyma"}); err != nil || mesh.key() != "istio_kyma:kyma-system:default" {
		t.Errorf("identity of the default Kyma Istio = %s, %v", mesh.key(), err)
	}
	for _, bad := range []objectIdentity{
		{Kind: "linkerd", Name: "x"},
		{Kind: "istio_sail", Namespace: "istio-system", Name: "default"},
		{Kind: "kuma", Namespace: "kuma-system"},
	} {
		if _, _, err := meshFromIdentity(bad); err == nil {
			t.Errorf("meshFromIdentity(%+v) accepted", bad)
		}
	}
}

// Every kind's mesh value converts (object panics on a model that does not
// match the schema), and the attribute types come from the schema.
func TestMeshModelMatchesSchema(t *testing.T) {
	for _, name := range meshKindNames() {
		mesh, err := parseMeshKey(name + ":ns:n")
		if err != nil {
			mesh, err = parseMeshKey(name + ":n")
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := mesh.object().Attributes()["kind"].String(); got != `"`+name+`"` {
			t.Errorf("mesh.kind = %s, want %q", got, name)
		}
	}
	if len(caCertificateAttrTypes()) != 4 || len(meshAttrTypes()) != 4 {
		t.Errorf("attribute types from the schema: ca_certificates %v, mesh %v", caCertificateAttrTypes(), meshAttrTypes())
	}
}

func TestMeshListConversion(t *testing.T) {
	obj := func(apiVersion, kind string, spec map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": "n", "namespace": "ns"}, "spec": spec,
		}}
	}
	pem := map[string]any{"type": "Pem", "pem": map[string]any{"value": "PEM"}}
	for _, tc := range []struct {
		obj        *unstructured.Unstructured
		kind       string
		manageable bool
	}{
		{obj("operator.kyma-project.io/v1alpha2", "Istio", nil), meshKindKyma, true},
		{obj("sailoperator.io/v1", "Istio", nil), meshKindSail, true},
		{obj("kuma.io/v1alpha1", "MeshTrust", map[string]any{"trustDomain": "a.test", "caBundles": []any{pem}}), meshKindKuma, true},
		{obj("kuma.io/v1alpha1", "MeshTrust", map[string]any{"caBundles": []any{pem}}), meshKindKuma, false},
		{obj("kuma.io/v1alpha1", "MeshTrust", map[string]any{"trustDomain": "a.test"}), meshKindKuma, false},
		{obj("kuma.io/v1alpha1", "MeshTrust", map[string]any{"trustDomain": "a.test", "caBundles": []any{
			pem, map[string]any{"type": "File", "file": map[string]any{"path": "/ca.pem"}},
		}}), meshKindKuma, false},
	} {
		kind, ok := meshKindOf(tc.obj)
		if !ok || kind.name != tc.kind {
			t.Errorf("meshKindOf(%s) = %s, %v; want %s", tc.obj.GetAPIVersion(), kind.name, ok, tc.kind)
			continue
		}
		if got := meshManageable(kind, tc.obj); got != tc.manageable {
			t.Errorf("meshManageable(%s %v) = %v, want %v", tc.kind, tc.obj.Object["spec"], got, tc.manageable)
		}
		if !tc.manageable {
			continue
		}
		state, diags := meshTrustDomainStateFromObject(context.Background(), clusterValue("west"), kind, tc.obj)
		if diags.HasError() {
			t.Fatal(diags)
		}
		if !state.KeepPreviousAsAlias.IsNull() && state.KeepPreviousAsAlias.ValueBool() || state.ForceConflicts.ValueBool() {
			t.Errorf("%s: imported state sets keep_previous_as_alias or force_conflicts", tc.kind)
		}
		if want := "west/" + tc.kind + ":ns:n"; state.ID.ValueString() != want && tc.kind != meshKindSail {
			t.Errorf("%s: id %s, want %s", tc.kind, state.ID.ValueString(), want)
		}
	}
	if _, ok := meshKindOf(obj("networking.istio.io/v1", "Gateway", nil)); ok {
		t.Error("meshKindOf accepted an object no mesh kind has")
	}
}
