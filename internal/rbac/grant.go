package rbac

import (
	"fmt"
	"slices"
	"strings"
)

// Grant says which role of the manifests grants verb on resource ("pods/exec",
// group "" for the core group) in namespace ("" for a cluster-wide request)
// and which files bind it there, as one sentence for a refusal's diagnostic;
// "" when no rule of the table grants it. When several roles grant the verb
// (ConfigMaps are read in the SPIRE namespace, the chart's bundle namespace
// and an IstioCSR's), the roles a file binds in that very namespace are
// named; otherwise all of them.
func Grant(group, resource, verb, namespace string) string {
	var roles []string
	for _, r := range Rules {
		if r.Group == group && r.Resource == resource && r.Verb == verb && !slices.Contains(roles, r.Role) {
			roles = append(roles, r.Role)
		}
	}
	if len(roles) == 0 {
		return ""
	}
	if namespace != "" {
		var here []string
		for _, role := range roles {
			if len(filesBinding(role, namespace)) > 0 {
				here = append(here, role)
			}
		}
		if len(here) > 0 {
			roles = here
		}
	}
	var parts []string
	for _, role := range roles {
		files := filesBinding(role, namespace)
		if len(files) == 0 {
			files = filesBinding(role, "*")
		}
		where := "bound cluster-wide by a ClusterRoleBinding"
		if namespace != "" && isNamespaced(role) {
			where = fmt.Sprintf("bound in namespace %q by a RoleBinding", namespace)
		}
		parts = append(parts, fmt.Sprintf("the ClusterRole %q, %s (%s)", role, where, strings.Join(files, ", ")))
	}
	return "The provider's RBAC manifests grant it with " + strings.Join(parts, ", or with ") + "."
}

// filesBinding lists the files that bind role in namespace ("" for a
// ClusterRoleBinding, "*" for anywhere).
func filesBinding(role, namespace string) []string {
	var out []string
	for _, f := range Files {
		if slices.ContainsFunc(f.Bindings, func(b Binding) bool {
			return b.Role == role && (namespace == "*" || b.Namespace == namespace || (b.Namespace == "" && !isNamespaced(role)))
		}) {
			out = append(out, f.Path)
		}
	}
	return out
}

func isNamespaced(role string) bool {
	i := slices.IndexFunc(Roles, func(r RoleSpec) bool { return r.Name == role })
	return i >= 0 && Roles[i].Namespaced
}
