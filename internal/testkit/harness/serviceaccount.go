package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

var (
	serviceAccountGVR = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	selfSARGVR        = schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "selfsubjectaccessreviews"}
)

// serviceAccountTokenTTL outlives any test run; the apiserver has no
// --service-account-max-token-expiration, so it is granted as asked.
const serviceAccountTokenTTL = 24 * time.Hour

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
// ManifestKubeconfig wrote.
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
