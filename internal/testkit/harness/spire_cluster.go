package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// ZTWIMResource is the ZeroTrustWorkloadIdentityManager resource; its
// singleton `cluster` names the trust domain, cluster name and bundle ConfigMap.
var ZTWIMResource = schema.GroupVersionResource{
	Group: "operator.openshift.io", Version: "v1alpha1", Resource: "zerotrustworkloadidentitymanagers",
}

// SpireServerResource is the operator's SpireServer resource; its singleton
// `cluster` configures the SPIRE server, including spec.federation.
var SpireServerResource = schema.GroupVersionResource{
	Group: "operator.openshift.io", Version: "v1alpha1", Resource: "spireservers",
}

// OperatorFieldManager is the field manager of what the harness writes in the
// operator's place.
const OperatorFieldManager = "operator"

// SpireServerRequiredSpec returns the SpireServer spec fields the released CRD
// requires, which only the operator (or its user) fills in, with plausible
// values. Callers add what they need and own the returned map.
func SpireServerRequiredSpec() map[string]any {
	return map[string]any{
		"jwtIssuer":   "https://oidc-discovery.apps.example.test",
		"caSubject":   map[string]any{"country": "US", "organization": "Example", "commonName": "example.test"},
		"persistence": map[string]any{"size": "1Gi", "accessMode": "ReadWriteOnce"},
		"datastore": map[string]any{
			"databaseType": "sqlite3", "connectionString": "/run/spire/data/datastore.sqlite3",
			"maxOpenConns": int64(100), "maxIdleConns": int64(2), "connMaxLifetime": int64(0),
		},
	}
}

// spireServerImage is what the Pod object says it runs; nothing pulls it.
const spireServerImage = "ghcr.io/spiffe/spire-server:1.15.3"

// createClusterObjects makes what must exist before the server starts: the
// namespaces, the bundle ConfigMap when SPIRE's Notifier "k8sbundle" writes
// it (it patches the ConfigMap and fails when it is missing; the
// BundlePublisher "k8s_configmap" creates its own with a server-side apply)
// and, unless laid out as the Helm chart does, the
// ZeroTrustWorkloadIdentityManager `cluster` object describing this
// installation.
func (s *Spire) createClusterObjects(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(s.Cluster.RESTConfig())
	if err != nil {
		return err
	}
	for _, name := range []string{s.Namespace, s.BundleNamespace} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	if !s.publishes() {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: s.BundleConfigMap, Namespace: s.BundleNamespace}}
		if s.opts.Helm {
			// The chart makes the ConfigMap the notifier patches.
			cm.ObjectMeta = s.helmMeta(s.BundleConfigMap, s.BundleNamespace)
		}
		if _, err := cs.CoreV1().ConfigMaps(s.BundleNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating ConfigMap %s/%s: %w", s.BundleNamespace, s.BundleConfigMap, err)
		}
	}
	if s.opts.Helm {
		return nil
	}
	return s.ensureZTWIM(ctx)
}

// ensureZTWIM creates the `cluster` singleton, or accepts an existing one for
// the same trust domain. Its trust domain is immutable, so one for another
// trust domain is an error rather than something to overwrite.
func (s *Spire) ensureZTWIM(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(s.Cluster.RESTConfig())
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operator.openshift.io/v1alpha1",
		"kind":       "ZeroTrustWorkloadIdentityManager",
		"metadata":   map[string]any{"name": "cluster"},
		"spec": map[string]any{
			"trustDomain":     s.TrustDomain,
			"clusterName":     s.Cluster.Name,
			"bundleConfigMap": s.BundleConfigMap,
		},
	}}
	_, err = dyn.Resource(ZTWIMResource).Create(ctx, obj, metav1.CreateOptions{})
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ZeroTrustWorkloadIdentityManager cluster (is its CRD installed?): %w", err)
	}
	cur, err := dyn.Resource(ZTWIMResource).Get(ctx, "cluster", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading ZeroTrustWorkloadIdentityManager cluster: %w", err)
	}
	if td, _, _ := unstructured.NestedString(cur.Object, "spec", "trustDomain"); td != s.TrustDomain {
		return fmt.Errorf("ZeroTrustWorkloadIdentityManager cluster already exists with trust domain %q, not %q "+
			"(the field is immutable: one SPIRE installation per cluster)", td, s.TrustDomain)
	}
	return nil
}

// applySpireServer writes the SpireServer `cluster` as an administrator of
// the operator would (server-side apply as OperatorFieldManager, forcing
// conflicts), in the released CRD's terms: the required fields and the
// federation bundle endpoint's profile this server really serves. The
// released SpireServer has no trust domain (the ZeroTrustWorkloadIdentityManager
// holds it) and no address or port of the endpoint: the operator publishes
// the endpoint through an OpenShift Route, which a harness cluster does not
// serve, so managedRoute is "false" and peers get the URL from
// Spire.BundleEndpointURL (the lab's clusters.json), not from the cluster.
func (s *Spire) applySpireServer(ctx context.Context) error {
	dyn, err := dynamic.NewForConfig(s.Cluster.RESTConfig())
	if err != nil {
		return err
	}
	endpoint := map[string]any{"profile": "https_spiffe"}
	if s.opts.WebProfile {
		endpoint["profile"] = "https_web"
		endpoint["httpsWeb"] = map[string]any{"servingCert": map[string]any{"fileSyncInterval": int64(3600)}}
	}
	spec := SpireServerRequiredSpec()
	spec["federation"] = map[string]any{"bundleEndpoint": endpoint, "managedRoute": "false"}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operator.openshift.io/v1alpha1",
		"kind":       "SpireServer",
		"metadata":   map[string]any{"name": "cluster"},
		"spec":       spec,
	}}
	_, err = dyn.Resource(SpireServerResource).Apply(ctx, "cluster", obj,
		metav1.ApplyOptions{FieldManager: OperatorFieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("applying SpireServer cluster (is its CRD installed?): %w", err)
	}
	return nil
}

// waitBundleConfigMap waits until SPIRE's plugin (BundlePlugin) has written
// the server's bundle under BundleKey.
func (s *Spire) waitBundleConfigMap(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(s.Cluster.RESTConfig())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var last string
	for {
		cm, err := cs.CoreV1().ConfigMaps(s.BundleNamespace).Get(ctx, s.BundleConfigMap, metav1.GetOptions{})
		switch {
		case err != nil:
			last = err.Error()
		case s.holdsBundle(cm.Data[s.BundleKey]):
			return nil
		default:
			last = fmt.Sprintf("no bundle under %s yet (keys: %d)", s.BundleKey, len(cm.Data))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("SPIRE's %s did not write ConfigMap %s/%s (%s); last lines of %s:\n%s",
				s.BundlePlugin(), s.BundleNamespace, s.BundleConfigMap, last, s.LogPath(), fileTail(s.LogPath(), 25))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// registerNodeAndPod makes exec on the Pod reach the exec endpoint: the API
// server finds the Pod's node and connects to the node's status address
// (127.0.0.1) at its kubelet port.
func (s *Spire) registerNodeAndPod(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(s.Cluster.RESTConfig())
	if err != nil {
		return err
	}
	now := metav1.NewTime(time.Now())
	nodeStatus := corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(s.execPort)}},
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "zerotrust harness exec endpoint", LastHeartbeatTime: now, LastTransitionTime: now,
		}},
	}
	// A Node left by an earlier server for this namespace is pointed at this endpoint.
	if _, err := ensureNode(ctx, cs, s.NodeName, nodeStatus); err != nil {
		return err
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.PodName, Namespace: s.Namespace,
			Labels: map[string]string{"app.kubernetes.io/name": "spire-server"},
		},
		Spec: corev1.PodSpec{
			NodeName:   s.NodeName,
			Containers: []corev1.Container{{Name: s.Container, Image: spireServerImage}},
		},
	}
	_, err = createRunningPod(ctx, cs, pod, "harness://"+s.TrustDomain)
	return err
}

// ensureNode creates the Node name with status, or gives an existing one
// that status: nothing but the harness reports on its Nodes.
func ensureNode(ctx context.Context, cs kubernetes.Interface, name string, status corev1.NodeStatus) (*corev1.Node, error) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: status}
	created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err == nil {
		return created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating Node %s: %w", name, err)
	}
	cur, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading Node %s: %w", name, err)
	}
	cur.Status = status
	if cur, err = cs.CoreV1().Nodes().UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return nil, fmt.Errorf("updating Node %s status: %w", name, err)
	}
	return cur, nil
}

// holdsBundle reports whether data, a value of the bundle ConfigMap, is a
// bundle of this server with an X.509 authority, in the format its plugin
// writes.
func (s *Spire) holdsBundle(data string) bool {
	if !s.publishes() {
		return strings.Contains(data, "BEGIN CERTIFICATE")
	}
	b, err := spiffebundle.Parse(spiffeid.RequireTrustDomainFromString(s.TrustDomain), []byte(data))
	return err == nil && len(b.X509Authorities()) > 0
}

func ptrTo[T any](v T) *T { return &v }
