package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Client talks to one cluster. It is safe for concurrent use: Terraform calls
// a provider's resources in parallel (-parallelism, default 10).
//
// A Client lives for one Terraform graph walk, and so does everything it
// keeps: Terraform starts one provider process per walk (a plan with its
// refresh, an apply, an import), configures it once, and the configured
// provider builds one Client per cluster on first use (Clusters). What the
// walk learns once and shares between its resources therefore lives here:
// the list and refresh snapshots and the objects created since (duplicate
// claims), the kinds served, the refused requests, whether the cluster
// answers, and other packages' typed walk state (Attached). None of it may
// outlive the walk: the next plan must ask the cluster again.
type Client struct {
	// Name is the cluster key as users wrote it ("" is the default connection).
	Name         string
	FieldManager string
	// ReconnectTimeout bounds how long the walk waits for the cluster when
	// it stops answering after it answered (do); DefaultReconnectTimeout
	// when zero. Set before the first request.
	ReconnectTimeout time.Duration

	rest    *rest.Config
	dynamic dynamic.Interface
	// raw reads discovery documents. It stands in for client-go's discovery
	// client, whose package links kubernetes/scheme and with it every
	// built-in API type (measured: 45 MB -> 30 MB release binary without it).
	raw *rest.RESTClient

	// listCache memoises one list per kind per process for the checks that
	// need to see every object (duplicate trust domains), so N creates cost
	// one LIST, not N.
	listMu    sync.Mutex
	listCache map[schema.GroupVersionResource]*listEntry

	// served remembers kinds discovery said the cluster serves (GVR ->
	// true): a plan asks once per created object (duplicate check), and a
	// served CRD does not go away within one Terraform command. "Not served"
	// is never remembered: the CRD may be installed moments later.
	served sync.Map
	// snapshots holds one refresh snapshot per kind (GVR -> *snapshot); see
	// GetForRefresh.
	snapshots sync.Map
	// attached holds the walk state of other packages, one value per type
	// (see Attached).
	attached sync.Map
	// reach is the answer of Reachable, asked once.
	reach struct {
		mu    sync.Mutex
		asked bool
		err   error
	}
	// outage is what the walk knows of the cluster's answers since Reachable
	// found it answering (see do).
	outage outage
	// refusals holds the 403 answers of this client's life (one Terraform
	// graph walk) by request (see refusedOnce): RBAC does not change because
	// the provider asks again, so a refused request is sent once per walk,
	// however many resources, data sources and plan-time checks make it.
	refusals sync.Map
}

// refusedOnce runs call, the request key names ("get
// /apis/group/version/resource ns/name"), unless the cluster's RBAC refused
// that request before on this client: then it returns that answer again
// without asking.
func (c *Client) refusedOnce(key string, call func() error) error {
	if v, ok := c.refusals.Load(key); ok {
		err, _ := v.(error) // refusals holds nothing else
		return err
	}
	err := call()
	if apierrors.IsForbidden(err) {
		c.refusals.Store(key, err)
	}
	return err
}

func requestKey(verb string, kind Kind, namespace, name string) string {
	return verb + " " + kind.GVR().String() + " " + namespace + "/" + name
}

// doOnce is do (retries by classify) for the request verb on
// namespace/name of kind, sent not at all when RBAC refused it before on
// this client (refusedOnce).
func (c *Client) doOnce(ctx context.Context, verb string, kind Kind, namespace, name string, op func(context.Context) error) error {
	return c.refusedOnce(requestKey(verb, kind, namespace, name), func() error { return c.do(ctx, kind, op) })
}

// writeOnce is doOnce for a write that is read back (landed, see doWrite)
// before it is sent again.
func (c *Client) writeOnce(ctx context.Context, verb string, kind Kind, namespace, name string, op func(context.Context) error,
	landed func(context.Context) (bool, error)) error {
	return c.refusedOnce(requestKey(verb, kind, namespace, name), func() error { return c.doWrite(ctx, kind, op, landed) })
}

// Attached returns c's one *T, made by newT on first use: where packages
// keep, typed, what one Terraform graph walk learns once about the cluster
// and shares between its resources (resources' clusterWalk, providerdata's
// warning about a cluster that does not answer). It lives as long as c: one
// walk (see Client). Concurrent first callers get the same value.
func Attached[T any](c *Client, newT func() *T) *T {
	key := reflect.TypeFor[T]()
	v, ok := c.attached.Load(key)
	if !ok {
		v, _ = c.attached.LoadOrStore(key, newT())
	}
	t, _ := v.(*T) // attached holds a *T under T's type only
	return t
}

type listEntry struct {
	once  sync.Once
	items []unstructured.Unstructured
	err   error
	// claimed records objects created through this process after the list
	// was taken, keyed by an arbitrary identity the caller chooses.
	claimed map[string]string
}

// NewClient builds a client from a REST configuration. No request is made.
func NewClient(name string, cfg *rest.Config, fieldManager string) (*Client, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building dynamic client: %w", err)
	}
	raw, err := rest.UnversionedRESTClientFor(dynamic.ConfigFor(cfg))
	if err != nil {
		return nil, fmt.Errorf("building discovery client: %w", err)
	}
	return &Client{
		Name: name, FieldManager: fieldManager,
		rest: cfg, dynamic: dyn, raw: raw,
		listCache: map[schema.GroupVersionResource]*listEntry{},
	}, nil
}

// RESTConfig is the configuration the client was built from (for pod exec).
func (c *Client) RESTConfig() *rest.Config { return c.rest }

// DisplayName names the cluster in messages.
func (c *Client) DisplayName() string {
	if c.Name == "" {
		return "default"
	}
	return c.Name
}

func (c *Client) resource(kind Kind, namespace string) dynamic.ResourceInterface {
	ri := c.dynamic.Resource(kind.GVR())
	if kind.Namespaced {
		return ri.Namespace(namespace)
	}
	return ri
}

// Apply sends obj as a server-side apply patch owned by the client's field
// manager. Only the fields present in obj are claimed; fields the manager
// owned before and left out are released.
func (c *Client) Apply(ctx context.Context, kind Kind, obj *unstructured.Unstructured, force bool) (*unstructured.Unstructured, error) {
	obj.SetAPIVersion(kind.APIVersion())
	obj.SetKind(kind.Kind)
	var out *unstructured.Unstructured
	err := c.writeOnce(ctx, "patch", kind, obj.GetNamespace(), obj.GetName(), func(ctx context.Context) error {
		var err error
		out, err = c.resource(kind, obj.GetNamespace()).Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{
			FieldManager: c.FieldManager,
			Force:        force,
		})
		return err
	}, c.readBack(kind, obj.GetNamespace(), obj.GetName(), &out, func(live *unstructured.Unstructured) bool {
		return appliedBy(live, obj, c.FieldManager)
	}))
	if err != nil {
		return nil, &OpError{Cluster: c.DisplayName(), Verb: "patch", Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Err: err}
	}
	return out, nil
}

// MergePatch sends a JSON merge patch (an update, not an apply: the
// fields it sets are recorded under the client's field manager with
// operation Update), for the one change server-side apply cannot make:
// removing some items of an atomic list that another manager applied too.
func (c *Client) MergePatch(ctx context.Context, kind Kind, namespace, name string, patch []byte) (*unstructured.Unstructured, error) {
	var out *unstructured.Unstructured
	err := c.writeOnce(ctx, "patch", kind, namespace, name, func(ctx context.Context) error {
		var err error
		out, err = c.resource(kind, namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: c.FieldManager})
		return err
	}, c.readBack(kind, namespace, name, &out, func(live *unstructured.Unstructured) bool {
		return mergePatched(live.Object, patch)
	}))
	if err != nil {
		return nil, &OpError{Cluster: c.DisplayName(), Verb: "patch", Kind: kind, Namespace: namespace, Name: name, Err: err}
	}
	return out, nil
}

// ApplyDryRun sends obj as Apply would, with the same field manager, but
// asks the API server not to persist anything (dryRun=All): admission, the
// CRD's schema and CEL rules and the field-manager conflict check all run,
// so the answer is the one the real apply would get now. It makes one
// attempt: it serves plan-time checks, which stay silent on errors a retry
// could fix and leave those to the apply.
func (c *Client) ApplyDryRun(ctx context.Context, kind Kind, obj *unstructured.Unstructured, force bool) (*unstructured.Unstructured, error) {
	obj = obj.DeepCopy()
	obj.SetAPIVersion(kind.APIVersion())
	obj.SetKind(kind.Kind)
	var out *unstructured.Unstructured
	err := c.refusedOnce(requestKey("patch(dry run)", kind, obj.GetNamespace(), obj.GetName()), func() error {
		var err error
		out, err = c.resource(kind, obj.GetNamespace()).Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{
			FieldManager: c.FieldManager,
			Force:        force,
			DryRun:       []string{metav1.DryRunAll},
		})
		return err
	})
	if err != nil {
		return nil, &OpError{Cluster: c.DisplayName(), Verb: "patch", Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Err: err}
	}
	return out, nil
}

// Get reads one object. A missing object is an error for which IsNotFound is true.
func (c *Client) Get(ctx context.Context, kind Kind, namespace, name string) (*unstructured.Unstructured, error) {
	var out *unstructured.Unstructured
	err := c.doOnce(ctx, "get", kind, namespace, name, func(ctx context.Context) error {
		var err error
		out, err = c.resource(kind, namespace).Get(ctx, name, metav1.GetOptions{})
		return err
	})
	if err != nil {
		return nil, &OpError{Cluster: c.DisplayName(), Verb: "get", Kind: kind, Namespace: namespace, Name: name, Err: err}
	}
	return out, nil
}

// List returns every object of the kind (in namespace, for namespaced kinds).
func (c *Client) List(ctx context.Context, kind Kind, namespace string) ([]unstructured.Unstructured, error) {
	return c.ListSelected(ctx, kind, namespace, "")
}

// ListSelected is List restricted by a label selector ("" selects all);
// namespace "" lists a namespaced kind in every namespace.
func (c *Client) ListSelected(ctx context.Context, kind Kind, namespace, labelSelector string) ([]unstructured.Unstructured, error) {
	var out *unstructured.UnstructuredList
	err := c.doOnce(ctx, "list", kind, namespace, "", func(ctx context.Context) error {
		var err error
		out, err = c.resource(kind, namespace).List(ctx, metav1.ListOptions{LabelSelector: labelSelector})
		return err
	})
	if err != nil {
		return nil, &OpError{Cluster: c.DisplayName(), Verb: "list", Kind: kind, Namespace: namespace, Err: err}
	}
	return out.Items, nil
}

// Delete removes an object; an object already gone is not an error.
func (c *Client) Delete(ctx context.Context, kind Kind, namespace, name string) error {
	err := c.doOnce(ctx, "delete", kind, namespace, name, func(ctx context.Context) error {
		return c.resource(kind, namespace).Delete(ctx, name, metav1.DeleteOptions{})
	})
	if err != nil && !isObjectNotFound(err) {
		return &OpError{Cluster: c.DisplayName(), Verb: "delete", Kind: kind, Namespace: namespace, Name: name, Err: err}
	}
	return nil
}

// WaitFor polls the object until done reports true, done returns an error,
// or ctx ends. A missing object keeps the wait going: it may not exist yet.
func (c *Client) WaitFor(ctx context.Context, kind Kind, namespace, name string, interval time.Duration,
	done func(*unstructured.Unstructured) (bool, error)) (*unstructured.Unstructured, error) {
	var last *unstructured.Unstructured
	err := wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
		obj, err := c.Get(ctx, kind, namespace, name)
		switch {
		case err == nil:
			last = obj
			return done(obj)
		case IsNotFound(err), ctx.Err() != nil, strings.Contains(err.Error(), "would exceed context deadline"):
			// A poll right at the deadline fails in the client's rate limiter
			// ("would exceed context deadline"): that is the wait running
			// out, reported below as the timeout it is, not an API error.
			return false, nil //nolint:nilerr // not found or out of time: keep waiting, the poll ends on ctx
		default:
			return false, err
		}
	})
	if err != nil && ctx.Err() != nil && wait.Interrupted(err) {
		return last, fmt.Errorf("timed out waiting for %s %q: %w", kind.Kind, name, ctx.Err())
	}
	return last, err
}

// ListOnce returns the objects of a kind as listed once per client, for
// checks across all objects (duplicate trust domains) that would otherwise
// cost one LIST per resource.
func (c *Client) ListOnce(ctx context.Context, kind Kind) ([]unstructured.Unstructured, error) {
	e := c.listEntry(kind)
	e.once.Do(func() { e.items, e.err = c.List(ctx, kind, "") })
	if e.err != nil {
		// A failed list is not remembered: the next caller may find the API back.
		c.listMu.Lock()
		delete(c.listCache, kind.GVR())
		c.listMu.Unlock()
	}
	return e.items, e.err
}

// Claim records, for the lifetime of this provider process, that key is
// taken by owner; it returns the previous owner when another one holds it.
// Used with ListOnce so two resources in one apply cannot create duplicates.
func (c *Client) Claim(kind Kind, key, owner string) (string, bool) {
	e := c.listEntry(kind)
	c.listMu.Lock()
	defer c.listMu.Unlock()
	if prev, ok := e.claimed[key]; ok && prev != owner {
		return prev, false
	}
	e.claimed[key] = owner
	return owner, true
}

// Release forgets a claim made with Claim (the object was deleted).
func (c *Client) Release(kind Kind, key string) {
	e := c.listEntry(kind)
	c.listMu.Lock()
	defer c.listMu.Unlock()
	delete(e.claimed, key)
}

func (c *Client) listEntry(kind Kind) *listEntry {
	c.listMu.Lock()
	defer c.listMu.Unlock()
	e, ok := c.listCache[kind.GVR()]
	if !ok {
		e = &listEntry{claimed: map[string]string{}}
		c.listCache[kind.GVR()] = e
	}
	return e
}

// Served asks discovery whether the cluster serves kind. A "no" is asked
// again on every call (a CRD may have been installed moments ago); a "yes"
// is remembered for the client's life.
func (c *Client) Served(ctx context.Context, kind Kind) (bool, error) {
	if _, ok := c.served.Load(kind.GVR()); ok {
		return true, nil
	}
	served, err := c.askServed(ctx, kind)
	if err == nil && served {
		c.served.Store(kind.GVR(), true)
	}
	return served, err
}

func (c *Client) askServed(ctx context.Context, kind Kind) (bool, error) {
	var served bool
	err := c.do(ctx, Kind{}, func(ctx context.Context) error {
		list, err := c.serverResources(ctx, kind.APIVersion())
		if err != nil {
			if apierrors.IsNotFound(err) {
				served = false
				return nil
			}
			return err
		}
		served = false
		for _, r := range list.APIResources {
			if r.Name == kind.Plural {
				served = true
			}
		}
		return nil
	})
	return served, err
}

// groupVersionPath is the URL path of a group version ("v1" or
// "<group>/<version>"): /api/v1 for the core group, /apis/<group>/<version>
// otherwise.
func groupVersionPath(groupVersion string) string {
	if !strings.Contains(groupVersion, "/") {
		return "/api/" + groupVersion
	}
	return "/apis/" + groupVersion
}

// serverResources is the discovery document of one group version
// (GET /api/v1 or /apis/<group>/<version>).
func (c *Client) serverResources(ctx context.Context, groupVersion string) (*metav1.APIResourceList, error) {
	path := groupVersionPath(groupVersion)
	body, err := c.raw.Get().AbsPath(path).Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	return &list, nil
}

// crdAbsent is called after the API answered 404 for kind's resource type.
// It asks for the kind's CustomResourceDefinition: when the CRD does not
// exist, or exists without serving kind's version, it returns the error to
// report now, since no wait can change that. It returns nil when the CRD
// exists and serves the version (it was installed moments ago and the API
// server does not route it yet) or when the CRD cannot be read (credentials
// without access to CRDs): then the caller waits out the grace window.
func (c *Client) crdAbsent(ctx context.Context, kind Kind, typeErr error) error {
	if kind.CRDName() == "" {
		return nil
	}
	body, err := c.raw.Get().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + kind.CRDName()).Do(ctx).Raw()
	if err != nil {
		// apiextensions.k8s.io is always served, so a 404 is about the CRD.
		if apierrors.IsNotFound(err) {
			return &CRDNotInstalledError{Kind: kind, Err: typeErr}
		}
		return nil
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Served bool   `json:"served"`
			} `json:"versions"`
		} `json:"spec"`
	}
	// Unreadable: wait out the grace window, as when the CRD cannot be read.
	if decoded := json.Unmarshal(body, &crd) == nil; !decoded {
		return nil
	}
	var served []string
	for _, v := range crd.Spec.Versions {
		if v.Served {
			if v.Name == kind.Version {
				return nil
			}
			served = append(served, v.Name)
		}
	}
	return &CRDNotInstalledError{Kind: kind, Err: typeErr, CRDPresent: true, ServedVersions: served}
}

// IsNotFound reports whether err means the object does not exist (as opposed
// to its type not being served).
func IsNotFound(err error) bool {
	var nf *CRDNotInstalledError
	if errors.As(err, &nf) {
		return false
	}
	return isObjectNotFound(err)
}

func isObjectNotFound(err error) bool {
	return apierrors.IsNotFound(err) && !isTypeNotFound(err)
}

// isTypeNotFound tells a 404 for an unserved resource type (no CRD) from a
// 404 for a missing object: only the latter carries the object's name.
func isTypeNotFound(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsNotFound(err) {
		return false
	}
	d := status.Status().Details
	return d == nil || d.Name == ""
}
