package rbac

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestRenderedFilesCommitted fails when the committed manifest or guide
// template differs from what the table renders: the table is the one place
// to change a permission.
func TestRenderedFilesCommitted(t *testing.T) {
	for path, want := range map[string][]byte{ManifestPath: Manifest(), GuidePath: Guide()} {
		got, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil {
			t.Fatalf("%v (run `go run ./internal/rbac/cmd/rbacgen`)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what internal/rbac renders: run `make docs` (or `go run ./internal/rbac/cmd/rbacgen`) and commit", path)
		}
	}
}

// TestManifestParses checks that every ClusterRole of the manifest decodes
// and holds exactly the table's rules of that role.
func TestManifestParses(t *testing.T) {
	docs := bytes.Split(Manifest(), []byte("\n---\n"))
	roles := map[string]rbacv1.ClusterRole{}
	for _, doc := range docs {
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict(doc, &role); err != nil {
			var binding rbacv1.RoleBinding
			if err2 := yaml.Unmarshal(doc, &binding); err2 != nil {
				t.Fatalf("document does not decode: %v\n%s", err, doc)
			}
			continue
		}
		if role.Kind == "ClusterRole" {
			roles[role.Name] = role
		}
	}
	if len(roles) != len(Roles) {
		t.Fatalf("manifest has %d ClusterRoles, want %d", len(roles), len(Roles))
	}
	for _, r := range Rules {
		role, ok := roles[r.Role]
		if !ok {
			t.Fatalf("no ClusterRole %s in the manifest", r.Role)
		}
		if !slices.ContainsFunc(role.Rules, func(p rbacv1.PolicyRule) bool {
			return slices.Contains(p.APIGroups, r.Group) && slices.Contains(p.Resources, r.Resource) && slices.Contains(p.Verbs, r.Verb)
		}) {
			t.Errorf("ClusterRole %s does not grant %s", r.Role, r.Key())
		}
	}
}

// TestTableWellFormed: every rule is used by some type, no rule twice, and
// every namespaced role is bound by a RoleBinding.
func TestTableWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		if seen[r.Key()] {
			t.Errorf("rule %s appears twice", r.Key())
		}
		seen[r.Key()] = true
		if len(r.Uses) == 0 {
			t.Errorf("rule %s names no type using it", r.Key())
		}
		if !slices.ContainsFunc(Roles, func(s RoleSpec) bool { return s.Name == r.Role }) {
			t.Errorf("rule %s names an unknown role", r.Key())
		}
	}
}
