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

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// manifestFieldManager owns what ApplyManifest writes, as `kubectl apply
// --server-side` would.
const manifestFieldManager = "kubectl"

// ApplyManifest applies every document of a YAML manifest to the cluster as
// written, as `kubectl apply --server-side -f` does: each object's resource
// from the API server's discovery, a namespaced object without a namespace
// in "default", nothing added or left out. A document the API server refuses
// (a RoleBinding in a namespace the cluster lacks, say) fails the apply with
// its answer. It returns the objects applied.
func (c *Cluster) ApplyManifest(ctx context.Context, manifest []byte) ([]*unstructured.Unstructured, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(c.RESTConfig())
	if err != nil {
		return nil, err
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		return nil, err
	}
	objs, err := decodeManifest(manifest)
	if err != nil {
		return nil, err
	}
	var applied []*unstructured.Unstructured
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			if u.GetNamespace() == "" {
				u.SetNamespace("default")
			}
			ri = dyn.Resource(m.Resource).Namespace(u.GetNamespace())
		}
		out, err := ri.Apply(ctx, u.GetName(), u, metav1.ApplyOptions{FieldManager: manifestFieldManager, Force: true})
		if err != nil {
			return nil, fmt.Errorf("applying %s %s: %w", u.GetKind(), objectName(u), err)
		}
		applied = append(applied, out)
	}
	return applied, nil
}

// decodeManifest splits a YAML manifest into its objects; documents of
// comments only are none.
func decodeManifest(manifest []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decoding the manifest: %w", err)
		}
		if len(obj) > 0 {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
}

// grants is what a manifest's objects grant: its ClusterRoles by name, the
// ServiceAccounts ("namespace/name") its bindings name, and each binding as
// the first rule of its role where the binding grants it.
type grants struct {
	roles    map[string]*unstructured.Unstructured
	subjects []string
	first    []Access
}

func manifestGrants(objs []*unstructured.Unstructured) (grants, error) {
	g := grants{roles: map[string]*unstructured.Unstructured{}}
	var bindings []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole":
			g.roles[o.GetName()] = o
		case "ClusterRoleBinding", "RoleBinding":
			bindings = append(bindings, o)
			list, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			for _, s := range list {
				m, _ := s.(map[string]any)
				if m["kind"] == "ServiceAccount" {
					if name := fmt.Sprintf("%v/%v", m["namespace"], m["name"]); !slices.Contains(g.subjects, name) {
						g.subjects = append(g.subjects, name)
					}
				}
			}
		}
	}
	for _, b := range bindings {
		ref, _, _ := unstructured.NestedString(b.Object, "roleRef", "name")
		role, ok := g.roles[ref]
		if !ok {
			return g, fmt.Errorf("%s %s binds ClusterRole %s, which no manifest holds", b.GetKind(), objectName(b), ref)
		}
		if first := firstRule(role); first != nil {
			first.Namespace = b.GetNamespace()
			g.first = append(g.first, *first)
		}
	}
	return g, nil
}

func objectName(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}

// ManifestKubeconfig applies each manifest as written (ApplyManifest), in
// order, and gives a test the credentials of the one ServiceAccount their
// bindings name, which hold what the manifests grant and nothing else: a
// token minted with the TokenRequest API, in a kubeconfig with one context
// (named after the cluster) written under c.Dir; its path is returned. The
// ServiceAccount must exist once the manifests are applied (one of them
// creates it). It returns once the API server's RBAC answers as the
// ServiceAccount reflect every binding.
func (c *Cluster) ManifestKubeconfig(ctx context.Context, manifests ...[]byte) (string, error) {
	var objs []*unstructured.Unstructured
	for _, m := range manifests {
		applied, err := c.ApplyManifest(ctx, m)
		if err != nil {
			return "", err
		}
		objs = append(objs, applied...)
	}
	g, err := manifestGrants(objs)
	if err != nil {
		return "", fmt.Errorf("ManifestKubeconfig: %w", err)
	}
	if len(g.subjects) != 1 {
		return "", fmt.Errorf("ManifestKubeconfig: the manifests bind %d ServiceAccounts (%s), want one", len(g.subjects), strings.Join(g.subjects, ", "))
	}
	saNS, saName, _ := strings.Cut(g.subjects[0], "/")
	dyn, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		return "", err
	}
	token, err := c.serviceAccountToken(ctx, dyn, saNS, saName)
	if err != nil {
		return "", err
	}
	// The RBAC authorizer learns of new bindings through its informers: wait
	// until the first rule of each bound role is allowed where it is bound.
	for _, a := range g.first {
		if err := c.WaitAccess(ctx, token, a, true); err != nil {
			return "", err
		}
	}
	path := filepath.Join(c.Dir, "sa-"+saNS+"-"+saName+".kubeconfig")
	if err := writeKubeconfigWith(path, []*Cluster{c}, func(*Cluster) string { return token }); err != nil {
		return "", err
	}
	return path, nil
}
