package harness

import (
	"slices"
	"testing"
)

// TestManifestGrants: a manifest's documents are decoded as written (a
// document of comments is none), and its bindings give the ServiceAccount
// they bind and the first rule of each bound role, where it is bound.
func TestManifestGrants(t *testing.T) {
	manifest := []byte(`# header
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: wide
rules:
  - apiGroups: ["spire.spiffe.io"]
    resources: ["clusterfederatedtrustdomains"]
    verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: narrow
rules:
  - apiGroups: [""]
    resources: ["pods/exec"]
    verbs: ["create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: wide
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: wide}
subjects: [{kind: ServiceAccount, namespace: terraform, name: zerotrust}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: narrow
  namespace: spire
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: narrow}
subjects: [{kind: ServiceAccount, namespace: terraform, name: zerotrust}]
---
# a document of comments
`)
	objs, err := decodeManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 4 {
		t.Fatalf("decoded %d objects, want 4", len(objs))
	}
	g, err := manifestGrants(objs)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.subjects, []string{"terraform/zerotrust"}) {
		t.Errorf("subjects = %v, want terraform/zerotrust", g.subjects)
	}
	want := []Access{
		{Verb: "get", Group: "spire.spiffe.io", Resource: "clusterfederatedtrustdomains"},
		{Verb: "create", Resource: "pods", Subresource: "exec", Namespace: "spire"},
	}
	if !slices.Equal(g.first, want) {
		t.Errorf("first rules = %+v, want %+v", g.first, want)
	}
	if _, err := manifestGrants(objs[2:]); err == nil {
		t.Error("a binding of a ClusterRole no manifest holds is accepted")
	}
}
