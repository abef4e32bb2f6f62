package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	namespaceGVR          = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	serviceAccountGVR     = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	clusterRoleGVR        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	clusterRoleBindingGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
	roleBindingGVR        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
	selfSARGVR            = schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectaccessreviews"}
)

// rbacFieldManager owns what ServiceAccountKubeconfig writes.
const rbacFieldManager = "harness-rbac"

// serviceAccountTokenTTL outlives any test run; the apiserver has no
// --service-account-max-token-expiration, so it is granted as asked.
const serviceAccountTokenTTL = 24 * time.Hour

// ServiceAccountKubeconfig gives a test credentials that hold only what an
// RBAC manifest grants. name is "namespace/name" of a ServiceAccount, created
// with its namespace when missing. Every ClusterRole document of manifest is
// applied as written; each ClusterRole that a ClusterRoleBinding document of
// the manifest binds is bound to the ServiceAccount cluster-wide (a
// ClusterRoleBinding named after the ServiceAccount and role), and every
// other ClusterRole of the manifest by a RoleBinding in each of namespaces
// (created when missing). The manifest's own bindings and other documents are
// not applied: their subjects are examples. A token is minted with the
// TokenRequest API (the harness runs no controller-manager, so no token
// Secrets appear), and a kubeconfig with one context (named after the
// cluster) is written under c.Dir; its path is returned. It returns once the
// API server's RBAC answers as the ServiceAccount reflect the bindings.
func (c *Cluster) ServiceAccountKubeconfig(ctx context.Context, name string, manifest []byte, namespaces ...string) (string, error) {
	return c.serviceAccountKubeconfig(ctx, name, manifest, func(string) []string { return namespaces })
}

// ServiceAccountKubeconfigPerRole is ServiceAccountKubeconfig with a
// RoleBinding of each namespaced ClusterRole only in the namespaces
// roleNamespaces lists for it (none when it lists none): a test then holds
// exec, say, only in the SPIRE namespace, as the manifest's comments say.
func (c *Cluster) ServiceAccountKubeconfigPerRole(ctx context.Context, name string, manifest []byte, roleNamespaces map[string][]string) (string, error) {
	return c.serviceAccountKubeconfig(ctx, name, manifest, func(role string) []string { return roleNamespaces[role] })
}

func (c *Cluster) serviceAccountKubeconfig(ctx context.Context, name string, manifest []byte, namespacesOf func(role string) []string) (string, error) {
	saNS, saName, ok := strings.Cut(name, "/")
	if !ok || saNS == "" || saName == "" {
		return "", fmt.Errorf("ServiceAccountKubeconfig: name %q is not namespace/name", name)
	}
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		return "", err
	}
	roles, clusterWide, err := manifestRoles(manifest)
	if err != nil {
		return "", err
	}
	if len(roles) == 0 {
		return "", errors.New("ServiceAccountKubeconfig: the manifest has no ClusterRole")
	}
	all := []string{saNS}
	for _, role := range roles {
		for _, ns := range namespacesOf(role.GetName()) {
			if !slices.Contains(all, ns) {
				all = append(all, ns)
			}
		}
	}
	for _, ns := range all {
		if err := applyObject(ctx, dyn, namespaceGVR, "", map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns},
		}); err != nil {
			return "", err
		}
	}
	if err := applyObject(ctx, dyn, serviceAccountGVR, saNS, map[string]any{
		"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": saName, "namespace": saNS},
	}); err != nil {
		return "", err
	}
	subject := []any{map[string]any{"kind": "ServiceAccount", "name": saName, "namespace": saNS}}
	for _, role := range roles {
		if err := applyObject(ctx, dyn, clusterRoleGVR, "", role.Object); err != nil {
			return "", err
		}
		binding := map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1",
			"metadata":   map[string]any{"name": saNS + "-" + saName + "-" + role.GetName()},
			"roleRef":    map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role.GetName()},
			"subjects":   subject,
		}
		if clusterWide[role.GetName()] {
			binding["kind"] = "ClusterRoleBinding"
			if err := applyObject(ctx, dyn, clusterRoleBindingGVR, "", binding); err != nil {
				return "", err
			}
			continue
		}
		binding["kind"] = "RoleBinding"
		for _, ns := range namespacesOf(role.GetName()) {
			b := runtime.DeepCopyJSON(binding)
			b["metadata"] = map[string]any{"name": saNS + "-" + saName + "-" + role.GetName(), "namespace": ns}
			if err := applyObject(ctx, dyn, roleBindingGVR, ns, b); err != nil {
				return "", err
			}
		}
	}

	token, err := c.serviceAccountToken(ctx, dyn, saNS, saName)
	if err != nil {
		return "", err
	}
	// The RBAC authorizer learns of new bindings through its informers:
	// wait until the first rule of each role is allowed, so the caller's
	// first request is not refused for a binding the API server has not seen.
	for _, role := range roles {
		first := firstRule(role)
		namespaces := namespacesOf(role.GetName())
		if first == nil || (!clusterWide[role.GetName()] && len(namespaces) == 0) {
			continue
		}
		if !clusterWide[role.GetName()] {
			first.Namespace = namespaces[0]
		}
		if err := c.WaitAccess(ctx, token, *first, true); err != nil {
			return "", err
		}
	}

	path := filepath.Join(c.Dir, "sa-"+saNS+"-"+saName+".kubeconfig")
	if err := writeKubeconfigWith(path, []*Cluster{c}, func(*Cluster) string { return token }); err != nil {
		return "", err
	}
	return path, nil
}

// Access is one request an access review asks about.
type Access struct {
	Verb, Group, Resource, Subresource, Namespace, Name string
}

func (a Access) String() string {
	r := a.Resource
	if a.Subresource != "" {
		r += "/" + a.Subresource
	}
	if a.Group != "" {
		r += "." + a.Group
	}
	where := "cluster-wide"
	if a.Namespace != "" {
		where = "in namespace " + a.Namespace
	}
	return fmt.Sprintf("%s %s %s", a.Verb, r, where)
}

// Allowed asks the API server, as the bearer of token, whether it may do a
// (a SelfSubjectAccessReview, which every authenticated user may create).
func (c *Cluster) Allowed(ctx context.Context, token string, a Access) (bool, error) {
	cfg := c.restConfig(token)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return false, err
	}
	review := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
		"spec": map[string]any{"resourceAttributes": map[string]any{
			"verb": a.Verb, "group": a.Group, "resource": a.Resource, "subresource": a.Subresource,
			"namespace": a.Namespace, "name": a.Name,
		}},
	}}
	out, err := dyn.Resource(selfSARGVR).Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("SelfSubjectAccessReview for %s: %w", a, err)
	}
	allowed, _, _ := unstructured.NestedBool(out.Object, "status", "allowed")
	return allowed, nil
}

// WaitAccess waits until Allowed answers want for a (RBAC changes reach the
// authorizer through informers, a moment after the write).
func (c *Cluster) WaitAccess(ctx context.Context, token string, a Access, want bool) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := c.Allowed(ctx, token, a)
		if err != nil {
			return false, err
		}
		return got == want, nil
	})
	if err != nil {
		return fmt.Errorf("waiting until %s is allowed=%v: %w", a, want, err)
	}
	return nil
}

// serviceAccountToken mints a token for the ServiceAccount (TokenRequest).
func (c *Cluster) serviceAccountToken(ctx context.Context, dyn dynamic.Interface, ns, name string) (string, error) {
	req := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
		// The dynamic client takes the subresource's parent from the name.
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"expirationSeconds": int64(serviceAccountTokenTTL / time.Second)},
	}}
	out, err := dyn.Resource(serviceAccountGVR).Namespace(ns).Create(ctx, req, metav1.CreateOptions{}, "token")
	if err != nil {
		return "", fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", ns, name, err)
	}
	token, _, _ := unstructured.NestedString(out.Object, "status", "token")
	if token == "" {
		return "", fmt.Errorf("TokenRequest for ServiceAccount %s/%s returned no token", ns, name)
	}
	return token, nil
}

// ServiceAccountToken reads the bearer token of a kubeconfig
// ServiceAccountKubeconfig wrote.
func ServiceAccountToken(kubeconfig string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		return "", err
	}
	for _, a := range cfg.AuthInfos {
		if a.Token != "" {
			return a.Token, nil
		}
	}
	return "", fmt.Errorf("%s holds no token", kubeconfig)
}

// manifestRoles decodes the ClusterRoles of a YAML manifest and which of
// them a ClusterRoleBinding of the manifest binds.
func manifestRoles(manifest []byte) ([]*unstructured.Unstructured, map[string]bool, error) {
	var roles []*unstructured.Unstructured
	clusterWide := map[string]bool{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, nil, fmt.Errorf("decoding the RBAC manifest: %w", err)
		}
		u := &unstructured.Unstructured{Object: obj}
		switch u.GetKind() {
		case "ClusterRole":
			roles = append(roles, u)
		case "ClusterRoleBinding":
			if ref, _, _ := unstructured.NestedString(obj, "roleRef", "name"); ref != "" {
				clusterWide[ref] = true
			}
		}
	}
	return roles, clusterWide, nil
}

// firstRule is the first verb on the first resource of role's first rule.
func firstRule(role *unstructured.Unstructured) *Access {
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	if len(rules) == 0 {
		return nil
	}
	r, _ := rules[0].(map[string]any)
	groups, _, _ := unstructured.NestedStringSlice(r, "apiGroups")
	resources, _, _ := unstructured.NestedStringSlice(r, "resources")
	verbs, _, _ := unstructured.NestedStringSlice(r, "verbs")
	if len(groups) == 0 || len(resources) == 0 || len(verbs) == 0 {
		return nil
	}
	resource, sub, _ := strings.Cut(resources[0], "/")
	return &Access{Verb: verbs[0], Group: groups[0], Resource: resource, Subresource: sub}
}

func applyObject(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string, obj map[string]any) error {
	u := &unstructured.Unstructured{Object: obj}
	var ri dynamic.ResourceInterface = dyn.Resource(gvr)
	if ns != "" {
		ri = dyn.Resource(gvr).Namespace(ns)
	}
	_, err := ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: rbacFieldManager, Force: true})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("applying %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}
