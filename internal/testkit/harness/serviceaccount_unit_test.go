package harness

import (
	"testing"
)

// TestManifestRoles: ClusterRoles are taken as written, and those a
// ClusterRoleBinding of the manifest binds are the cluster-wide ones;
// comments and other documents are ignored.
func TestManifestRoles(t *testing.T) {
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
# apiVersion: rbac.authorization.k8s.io/v1
# kind: RoleBinding
`)
	roles, clusterWide, err := manifestRoles(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) != 2 || roles[0].GetName() != "wide" || roles[1].GetName() != "narrow" {
		t.Fatalf("roles = %v, want wide and narrow", roles)
	}
	if !clusterWide["wide"] || clusterWide["narrow"] {
		t.Errorf("cluster-wide = %v, want only wide", clusterWide)
	}
	if got := firstRule(roles[1]); got == nil || *got != (Access{Verb: "create", Resource: "pods", Subresource: "exec"}) {
		t.Errorf("firstRule(narrow) = %+v, want create pods/exec", got)
	}
}
