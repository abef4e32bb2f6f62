package rbac

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestRenderedFilesCommitted fails when a committed manifest or the guide
// template differs from what the table renders, or examples/rbac holds a
// manifest the table does not render: the table is the one place to change a
// permission.
func TestRenderedFilesCommitted(t *testing.T) {
	want := map[string][]byte{GuidePath: Guide()}
	for _, f := range Files {
		want[f.Path] = f.Render()
	}
	for path, data := range want {
		got, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil {
			t.Fatalf("%v (run `go run ./internal/rbac/cmd/rbacgen`)", err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s differs from what internal/rbac renders: run `make docs` (or `go run ./internal/rbac/cmd/rbacgen`) and commit", path)
		}
	}
	committed, err := filepath.Glob(filepath.Join("..", "..", ManifestDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range committed {
		rel := ManifestDir + "/" + filepath.Base(path)
		if _, ok := want[rel]; !ok {
			t.Errorf("%s is not rendered from the table: remove it (rbacgen does)", rel)
		}
	}
}

// decoded is a manifest split into its objects.
type decoded struct {
	roles    map[string]rbacv1.ClusterRole
	bindings []Binding
	kinds    []string
}

func decode(t *testing.T, f File) decoded {
	t.Helper()
	d := decoded{roles: map[string]rbacv1.ClusterRole{}}
	for i, doc := range bytes.Split(f.Render(), []byte("\n---\n")) {
		if i == 0 {
			continue // the header comment
		}
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("%s: a document does not decode: %v\n%s", f.Path, err, doc)
		}
		d.kinds = append(d.kinds, meta.Kind)
		switch meta.Kind {
		case "ClusterRole":
			var role rbacv1.ClusterRole
			if err := yaml.UnmarshalStrict(doc, &role); err != nil {
				t.Fatalf("%s: %v\n%s", f.Path, err, doc)
			}
			d.roles[role.Name] = role
		case "ClusterRoleBinding", "RoleBinding":
			var b rbacv1.RoleBinding
			if err := yaml.UnmarshalStrict(doc, &b); err != nil {
				t.Fatalf("%s: %v\n%s", f.Path, err, doc)
			}
			if b.Name != b.RoleRef.Name || len(b.Subjects) != 1 || b.Subjects[0].Namespace != SubjectNamespace || b.Subjects[0].Name != SubjectName {
				t.Errorf("%s: binding %s/%s binds %v to %s", f.Path, b.Namespace, b.Name, b.Subjects, b.RoleRef.Name)
			}
			d.bindings = append(d.bindings, Binding{Role: b.RoleRef.Name, Namespace: b.Namespace})
		case "Namespace", "ServiceAccount":
		default:
			t.Errorf("%s: unexpected kind %q", f.Path, meta.Kind)
		}
	}
	return d
}

// TestManifestsParse checks that every document of every manifest decodes
// strictly (nothing is commented out, so nothing is left for the reader to
// edit), that each ClusterRole holds exactly the table's rules of that role,
// and that each file binds what it declares: cluster-wide roles by a
// ClusterRoleBinding, namespaced ones by RoleBindings.
func TestManifestsParse(t *testing.T) {
	for _, f := range Files {
		d := decode(t, f)
		if !slices.Equal(d.bindings, f.Bindings) {
			t.Errorf("%s binds %v, want %v", f.Path, d.bindings, f.Bindings)
		}
		if f.Subject != slices.Contains(d.kinds, "ServiceAccount") {
			t.Errorf("%s: creates the ServiceAccount = %v, want %v", f.Path, !f.Subject, f.Subject)
		}
		for _, b := range f.Bindings {
			if (b.Namespace != "") != isNamespaced(b.Role) {
				t.Errorf("%s binds %s in %q, but the role is namespaced=%v", f.Path, b.Role, b.Namespace, isNamespaced(b.Role))
			}
		}
		if len(d.roles) != len(f.Roles()) {
			t.Errorf("%s has %d ClusterRoles, want %d", f.Path, len(d.roles), len(f.Roles()))
		}
		for name, role := range d.roles {
			var want int
			for _, r := range Rules {
				if r.Role != name {
					continue
				}
				want++
				if !slices.ContainsFunc(role.Rules, func(p rbacv1.PolicyRule) bool {
					return slices.Equal(p.APIGroups, []string{r.Group}) && slices.Equal(p.Resources, []string{r.Resource}) && slices.Contains(p.Verbs, r.Verb)
				}) {
					t.Errorf("%s: ClusterRole %s does not grant %s", f.Path, name, r.Key())
				}
			}
			var got int
			for _, p := range role.Rules {
				got += len(p.Verbs)
			}
			if got != want {
				t.Errorf("%s: ClusterRole %s grants %d verbs, the table %d", f.Path, name, got, want)
			}
		}
	}
}

// TestEveryRoleInAFile: each role of the table is bound by some manifest,
// and each install file grants every rule the SPIRE install needs: the
// cluster-wide role and the SPIRE role (and, for the chart, the bundle role).
func TestEveryRoleInAFile(t *testing.T) {
	for _, r := range Roles {
		if len(filesBinding(r.Name, "*")) == 0 {
			t.Errorf("no manifest binds %s", r.Name)
		}
	}
	if got := OperatorFile.Roles(); !slices.Equal(got, []string{Cluster, Spire}) {
		t.Errorf("the operator's file has roles %v", got)
	}
	if got := HelmFile.Roles(); !slices.Equal(got, []string{Cluster, Spire, SpireBundle}) {
		t.Errorf("the chart's file has roles %v", got)
	}
}

// TestGrantNamesTheRole: a refusal's diagnostic names the role that grants
// the request and the files that bind it where it was refused, taken from
// the table.
func TestGrantNamesTheRole(t *testing.T) {
	for name, tc := range map[string]struct {
		group, resource, verb, ns string
		want                      []string
	}{
		"chart's ConfigMaps list": {"", "configmaps", "list", HelmSpireNamespace, []string{
			`the ClusterRole "zerotrust-spire", bound in namespace "spire-server" by a RoleBinding (examples/rbac/helm-chart.yaml)`}},
		"bundle ConfigMap": {"", "configmaps", "get", HelmSpireBundleNamespace, []string{
			`the ClusterRole "zerotrust-spire-bundle", bound in namespace "spire-system" by a RoleBinding (examples/rbac/helm-chart.yaml)`}},
		"operator's exec": {"", "pods/exec", "create", OperatorSpireNamespace, []string{
			`the ClusterRole "zerotrust-spire", bound in namespace "zero-trust-workload-identity-manager" by a RoleBinding (examples/rbac/operator.yaml)`}},
		"a namespace no file binds": {"", "configmaps", "get", "elsewhere", []string{
			`"zerotrust-spire", bound in namespace "elsewhere" by a RoleBinding (examples/rbac/operator.yaml, examples/rbac/helm-chart.yaml)`,
			`"zerotrust-spire-bundle", bound in namespace "elsewhere"`, `"zerotrust-istio-csr", bound in namespace "elsewhere"`}},
		"cluster-wide": {"spire.spiffe.io", "clusterfederatedtrustdomains", "delete", "", []string{
			`the ClusterRole "zerotrust", bound cluster-wide by a ClusterRoleBinding (examples/rbac/operator.yaml, examples/rbac/helm-chart.yaml)`}},
		"IstioCSR's cluster-wide": {"rbac.authorization.k8s.io", "clusterroles", "delete", "", []string{
			`the ClusterRole "zerotrust-istio-csr-cluster", bound cluster-wide by a ClusterRoleBinding (examples/rbac/istio-csr.yaml)`}},
	} {
		got := Grant(tc.group, tc.resource, tc.verb, tc.ns)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: Grant = %q, want it to hold %q", name, got, w)
			}
		}
	}
	if got := Grant("", "secrets", "list", "x"); got != "" {
		t.Errorf("Grant of what no rule grants = %q, want \"\"", got)
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

// TestDocsNameOnlyShippedManifests: every examples/rbac/*.yaml the prose
// names (README, CONTRIBUTING, templates, docs, examples) is a manifest the
// table renders, so a renamed or removed file is not left named.
func TestDocsNameOnlyShippedManifests(t *testing.T) {
	named := regexp.MustCompile(ManifestDir + `/[A-Za-z0-9_.-]+\.yaml`)
	root := filepath.Join("..", "..")
	var files []string
	for _, f := range []string{"README.md", "CONTRIBUTING.md"} {
		files = append(files, filepath.Join(root, f))
	}
	for _, dir := range []string{"templates", "docs", "examples"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllString(string(b), -1) {
			if !slices.Contains(Paths(), m) {
				t.Errorf("%s names %s, which internal/rbac does not render (it renders %v)", path, m, Paths())
			}
		}
	}
}
