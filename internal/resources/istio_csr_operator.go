package resources

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/durationtype"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// This file holds what the IstioCSR resource knows about the cert-manager
// Operator's controller (openshift/cert-manager-operator,
// pkg/controller/istiocsr): when an apply may end (istioCSRWait) and what a
// destroy must remove (cleanUpIstioCSROperands). It stays apart from
// istio_csr_resource.go because it is one contract, written against the
// controller's source, and tested against the stand-in that follows the
// same source (internal/standin/istiocsr.go).

const (
	// istioCSRRejectAnnotation marks an IstioCSR the operator refused because
	// an older one exists in the cluster (utils.go
	// disallowMultipleIstioCSRInstances). It is checked before anything else
	// and never removed, so the object is refused for good.
	istioCSRRejectAnnotation = "operator.openshift.io/istio-csr-reject-multiple-instance"
	// istioCSRAgentName names the agent's Deployment, Services and
	// ServiceAccount, and is the value of the operator's `app` label on every
	// object it creates for an IstioCSR (constants.go).
	istioCSRAgentName = "cert-manager-istio-csr"
	// istioCSRNamespaceLabel maps objects outside the IstioCSR's namespace
	// (and cluster-scoped ones) to it.
	istioCSRNamespaceLabel = "cert-manager-istio-csr-namespace"
	// istiodCertificateName is the cert-manager Certificate the operator
	// creates in istio.namespace for istiod (certificates.go).
	istiodCertificateName = "istiod"
	// istioCSRDegradedSettle is how long a Degraded=True condition that was
	// already there before the apply is taken for the operator's old verdict.
	// The operator reconciles a spec change within a second or two, but
	// rewrites a condition only when its status or reason changes
	// (SetCondition), so a new failure of the same kind looks exactly like
	// the old one: after this window the unchanged condition is the verdict.
	istioCSRDegradedSettle = 15 * time.Second
	// istioCSRUpdateSettle is the least an update waits before it accepts
	// success. The operator says nothing when it has reconciled a generation
	// (no observedGeneration, and a success after a success writes no
	// status at all), and a change that touches neither istiod's Certificate
	// nor the agent's rollout (log level, labels) leaves all the evidence
	// the wait looks at as it was; the operator reconciles a spec change
	// within a second or two of its watch event, so after this window the
	// old evidence is the new verdict, and an error (Degraded, rejection)
	// has had time to show.
	istioCSRUpdateSettle = 5 * time.Second
)

// istioCSRAppSelector selects what the operator created in the IstioCSR's
// own namespace; only one IstioCSR can live there.
var istioCSRAppSelector = "app=" + istioCSRAgentName

// istioCSRMappedSelector selects what the operator created outside the
// IstioCSR's namespace ns: never select by `app` alone there, since another
// IstioCSR's objects share istio.namespace.
func istioCSRMappedSelector(ns string) string {
	return istioCSRAppSelector + "," + istioCSRNamespaceLabel + "=" + ns
}

// istioCSRDegradedError stops the wait: the operator gave up on the object
// (irrecoverable error) and does not retry until the spec changes.
type istioCSRDegradedError struct{}

func (*istioCSRDegradedError) Error() string { return "the IstioCSR is Degraded" }

// istioCSRRejectedError stops the wait: the operator refused the object
// because another IstioCSR is older.
type istioCSRRejectedError struct{ message string }

func (e *istioCSRRejectedError) Error() string { return "the IstioCSR was rejected: " + e.message }

// istioCSRCondition returns the status condition of type t of obj (the
// IstioCSR, or istiod's Certificate), or nil.
func istioCSRCondition(obj *unstructured.Unstructured, t string) map[string]any {
	if obj == nil {
		return nil
	}
	items, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, item := range items {
		if c, ok := item.(map[string]any); ok && c["type"] == t {
			return c
		}
	}
	return nil
}

// istioCSRWait decides when an apply of one IstioCSR has the operator's
// verdict. The operator's own conditions are not enough
// (api/operator/v1alpha1/conditions.go SetCondition never sets
// observedGeneration and changes a condition only when its status or reason
// changes; HandleReconcileResult sets Ready=True once the objects are
// applied, without looking at the agent or the certificate), so the apply
// is done when all of these hold:
//   - the object has no reject annotation (else: fail at once);
//   - Degraded is not True (else: fail at once, or, for a Degraded from
//     before the apply, after istioCSRDegradedSettle);
//   - Ready is True;
//   - the agent's Deployment has rolled out its current generation and has
//     an available replica;
//   - istiod's Certificate belongs to this IstioCSR, carries the object's
//     current duration, renew-before, common name and DNS names (so an old
//     Ready cannot pass after an update), and cert-manager reports it Ready
//     for its current generation.
type istioCSRWait struct {
	client *kube.Client
	ns     string
	// before is the object as it was before the apply (nil for a new one).
	before *unstructured.Unstructured
	start  time.Time
	// pending says what the last poll was still waiting for.
	pending []string
}

// run polls until the verdict, ctx's end, or an API error; it returns the
// last IstioCSR read.
func (w *istioCSRWait) run(ctx context.Context) (*unstructured.Unstructured, error) {
	w.start = time.Now()
	var last *unstructured.Unstructured
	err := wait.PollUntilContextCancel(ctx, istioCSRPollInterval, true, func(ctx context.Context) (bool, error) {
		previous := w.pending
		obj, done, err := w.poll(ctx)
		if obj != nil {
			last = obj
		}
		if err != nil && (ctx.Err() != nil || strings.Contains(err.Error(), "would exceed context deadline")) {
			// Out of time in the middle of a poll: what the last whole poll
			// waited for is what the timeout reports.
			w.pending = previous
			return false, nil //nolint:nilerr // the poll ends on ctx and reports the timeout
		}
		return done, err
	})
	return last, err
}

func (w *istioCSRWait) poll(ctx context.Context) (*unstructured.Unstructured, bool, error) {
	w.pending = nil
	obj, err := w.client.Get(ctx, kube.IstioCSR, w.ns, istioCSRName)
	switch {
	case kube.IsNotFound(err):
		w.pending = append(w.pending, "the IstioCSR to be readable")
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	if isIstioCSRRejected(obj) {
		return obj, false, &istioCSRRejectedError{message: objText(istioCSRCondition(obj, "Ready")["message"])}
	}
	if c := istioCSRCondition(obj, "Degraded"); c != nil && c["status"] == "True" {
		if !w.degradedBefore(c) || time.Since(w.start) >= istioCSRDegradedSettle {
			return obj, false, &istioCSRDegradedError{}
		}
		w.pending = append(w.pending, "the operator to reconsider a Degraded condition from before this apply")
		return obj, false, nil
	}
	if c := istioCSRCondition(obj, "Ready"); c == nil || c["status"] != "True" {
		w.pending = append(w.pending, "the operator to report Ready=True")
		return obj, false, nil
	}
	if err := w.checkDeployment(ctx); err != nil {
		return obj, false, err
	}
	if err := w.checkCertificate(ctx, obj); err != nil {
		return obj, false, err
	}
	if len(w.pending) == 0 && w.before != nil && time.Since(w.start) < istioCSRUpdateSettle {
		w.pending = append(w.pending, "the operator to reconcile the change")
	}
	return obj, len(w.pending) == 0, nil
}

// degradedBefore reports whether c is the Degraded condition the object
// already had before the apply.
func (w *istioCSRWait) degradedBefore(c map[string]any) bool {
	old := istioCSRCondition(w.before, "Degraded")
	if old == nil {
		return false
	}
	for _, k := range []string{"status", "reason", "message", "lastTransitionTime"} {
		if objText(old[k]) != objText(c[k]) {
			return false
		}
	}
	return true
}

// checkDeployment: the operator never looks at the agent's rollout
// (install_istiocsr.go; its Deployment watch filters on generation).
func (w *istioCSRWait) checkDeployment(ctx context.Context) error {
	dep, err := w.client.Get(ctx, kube.Deployment, w.ns, istioCSRAgentName)
	switch {
	case kube.IsNotFound(err):
		w.pending = append(w.pending, fmt.Sprintf("the agent's Deployment %s/%s to exist", w.ns, istioCSRAgentName))
		return nil
	case err != nil:
		return err
	}
	replicas, found, _ := unstructured.NestedInt64(dep.Object, "spec", "replicas")
	if !found {
		replicas = 1
	}
	observed, _, _ := unstructured.NestedInt64(dep.Object, "status", "observedGeneration")
	updated, _, _ := unstructured.NestedInt64(dep.Object, "status", "updatedReplicas")
	available, _, _ := unstructured.NestedInt64(dep.Object, "status", "availableReplicas")
	name := w.ns + "/" + istioCSRAgentName
	switch {
	case observed < dep.GetGeneration():
		w.pending = append(w.pending, fmt.Sprintf("the agent's Deployment %s to roll out generation %d (observed %d)", name, dep.GetGeneration(), observed))
	case updated < replicas:
		w.pending = append(w.pending, fmt.Sprintf("the agent's Deployment %s to update its replicas (%d of %d)", name, updated, replicas))
	case available < 1:
		w.pending = append(w.pending, fmt.Sprintf("the agent's Deployment %s to have an available replica", name))
	}
	return nil
}

// checkCertificate: the operator never looks at istiod's Certificate
// either, and leaves the old one (and its Ready) in place until it updates
// it, so the Certificate must show the object's current values
// (certificates.go updateCertificateParams).
func (w *istioCSRWait) checkCertificate(ctx context.Context, obj *unstructured.Unstructured) error {
	cfg, _, _ := unstructured.NestedMap(obj.Object, "spec", "istioCSRConfig")
	istioNS, _, _ := unstructured.NestedString(cfg, "istio", "namespace")
	name := istioNS + "/" + istiodCertificateName
	cert, err := w.client.Get(ctx, kube.CertManagerCertificate, istioNS, istiodCertificateName)
	switch {
	case kube.IsNotFound(err) || kube.IsCRDNotInstalled(err):
		w.pending = append(w.pending, fmt.Sprintf("istiod's Certificate %s to exist", name))
		return nil
	case err != nil:
		return err
	}
	if owner := cert.GetLabels()[istioCSRNamespaceLabel]; owner != w.ns {
		w.pending = append(w.pending, fmt.Sprintf("istiod's Certificate %s to be taken over for this IstioCSR (it is labelled for %q)", name, owner))
		return nil
	}
	want := istiodCertificateSpec(cfg, istioNS)
	spec, _, _ := unstructured.NestedMap(cert.Object, "spec")
	for _, field := range []string{"duration", "renewBefore"} {
		if !durationtype.Same(objText(spec[field]), objText(want[field])) {
			w.pending = append(w.pending, fmt.Sprintf("istiod's Certificate %s to get %s %v (it has %v)", name, field, want[field], spec[field]))
			return nil
		}
	}
	if objText(spec["commonName"]) != objText(want["commonName"]) || !slices.Equal(objStrings(spec, "dnsNames"), objStrings(want, "dnsNames")) {
		w.pending = append(w.pending, fmt.Sprintf("istiod's Certificate %s to get common name %v and DNS names %v", name, want["commonName"], want["dnsNames"]))
		return nil
	}
	ready := false
	c := istioCSRCondition(cert, "Ready")
	if c != nil && c["status"] == "True" {
		observed, found, _ := unstructured.NestedInt64(c, "observedGeneration")
		ready = !found || observed >= cert.GetGeneration()
	}
	if !ready {
		msg := objText(c["message"])
		if msg != "" {
			msg = " (" + msg + ")"
		}
		w.pending = append(w.pending, fmt.Sprintf("cert-manager to report istiod's Certificate %s Ready%s", name, msg))
	}
	return nil
}

// istiodCertificateSpec is what the operator writes into istiod's
// Certificate for the IstioCSR's spec.istioCSRConfig cfg
// (certificates.go updateCertificateParams): the durations as given (the
// CRD defaults them), the common name or istiod.<istio ns>.svc, and the DNS
// names: certificateDNSNames, then one per Istio revision ("default" is
// istiod.<ns>.svc, another revision r istiod-r.<ns>.svc, "" is skipped).
// The IstioCSR stand-in of the acceptance tests (internal/standin) renders
// the whole Certificate with code of its own, deliberately not this
// function: it plays the operator, so it is an independent oracle, and a
// mistake here makes the apply's wait fail against it instead of agreeing
// with itself. A change in updateCertificateParams goes into both.
func istiodCertificateSpec(cfg map[string]any, istioNS string) map[string]any {
	tls, _ := objMap(cfg, "istiodTLSConfig")
	cn := objText(tls["commonName"])
	if cn == "" {
		cn = "istiod." + istioNS + ".svc"
	}
	dnsNames := append([]string{}, objStrings(tls, "certificateDNSNames")...)
	istio, _ := objMap(cfg, "istio")
	for _, rev := range objStrings(istio, "revisions") {
		switch rev {
		case "":
		case istioCSRDefaultRevision:
			dnsNames = append(dnsNames, "istiod."+istioNS+".svc")
		default:
			dnsNames = append(dnsNames, "istiod-"+rev+"."+istioNS+".svc")
		}
	}
	names := make([]any, len(dnsNames))
	for i, n := range dnsNames {
		names[i] = n
	}
	return map[string]any{
		"duration":    tls["certificateDuration"],
		"renewBefore": tls["certificateRenewBefore"],
		"commonName":  cn,
		"dnsNames":    names,
	}
}

// istioCSROperandKinds are the kinds of what the operator creates for an
// IstioCSR, by where they live (see cleanUpIstioCSROperands).
var (
	istioCSROwnNamespaceKinds   = []kube.Kind{kube.Deployment, kube.Service, kube.ServiceAccount, kube.NetworkPolicy, kube.ConfigMap}
	istioCSRIstioNamespaceKinds = []kube.Kind{kube.Role, kube.RoleBinding, kube.CertManagerCertificate}
	istioCSRClusterKinds        = []kube.Kind{kube.ClusterRole, kube.ClusterRoleBinding}
)

// cleanUpIstioCSROperands deletes what the operator created for the IstioCSR
// of namespace ns, once that object is gone: the operator's own cleanup
// (controller.go cleanUp) only emits an event, and nothing it creates has
// an owner reference, so without this the agent keeps running after a
// destroy, and a namespace change leaves two agents. It finds the objects
// by the operator's labels: `app=cert-manager-istio-csr` in ns (one IstioCSR
// per namespace), and that plus `cert-manager-istio-csr-namespace=<ns>` in
// istio.namespace and cluster-wide, where other IstioCSRs' objects may live.
// The Secret istiod-tls (cert-manager's) and the user's issuer and CA stay.
// A kind the cluster does not serve (no cert-manager) is skipped; objects
// the credentials may not list or delete are named in a warning.
func cleanUpIstioCSROperands(ctx context.Context, client *kube.Client, ns, istioNS string) diag.Diagnostics {
	var diags diag.Diagnostics
	type scope struct {
		kinds     []kube.Kind
		namespace string
		selector  string
	}
	scopes := []scope{{istioCSROwnNamespaceKinds, ns, istioCSRAppSelector}, {istioCSRClusterKinds, "", istioCSRMappedSelector(ns)}}
	if istioNS != "" {
		scopes = append(scopes, scope{istioCSRIstioNamespaceKinds, istioNS, istioCSRMappedSelector(ns)})
	}
	var forbidden []string
	for _, s := range scopes {
		for _, kind := range s.kinds {
			where := "cluster-wide"
			if s.namespace != "" {
				where = "in namespace " + s.namespace
			}
			items, err := client.ListSelected(ctx, kind, s.namespace, s.selector)
			switch {
			case kube.IsCRDNotInstalled(err):
				continue
			case apierrors.IsForbidden(err):
				sentence, _ := kube.Refused(err)
				forbidden = append(forbidden, fmt.Sprintf("%s %s (-l %s): %s", kind.Plural, where, s.selector, sentence))
				continue
			case err != nil:
				diags.Append(kube.Diagnostic(err, "list what the cert-manager Operator created for the IstioCSR "+ns+"/"+istioCSRName))
				return diags
			}
			for _, item := range items {
				err := client.Delete(ctx, kind, item.GetNamespace(), item.GetName())
				switch {
				case apierrors.IsForbidden(err):
					sentence, _ := kube.Refused(err)
					forbidden = append(forbidden, fmt.Sprintf("%s %s: %s", kind.Kind, objectName(&item), sentence))
				case err != nil:
					diags.Append(kube.Diagnostic(err, "delete what the cert-manager Operator created for the IstioCSR "+ns+"/"+istioCSRName))
					return diags
				}
			}
		}
	}
	if len(forbidden) > 0 {
		diags.AddWarning("Agent Objects Left Behind", fmt.Sprintf(
			"The IstioCSR %s/%s is deleted, but the cert-manager Operator does not remove what it created for it, and the "+
				"provider's credentials may not remove these:\n  - %s\nDelete them with credentials that may (they carry the "+
				"label app=%s), or the istio-csr agent keeps running.",
			ns, istioCSRName, strings.Join(forbidden, "\n  - "), istioCSRAgentName))
	}
	return diags
}

func objectName(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetName()
	}
	return obj.GetNamespace() + "/" + obj.GetName()
}

// isIstioCSRRejected reports whether the operator refused obj for good.
func isIstioCSRRejected(obj *unstructured.Unstructured) bool {
	return obj != nil && obj.GetAnnotations()[istioCSRRejectAnnotation] == "true"
}

// istioCSRReserialised are the fields the operator's first Updates of an
// IstioCSR write back in its Go types' form (see keepLiveSpelling), which
// makes it their owner without having decided anything about them.
var istioCSRReserialised = []string{
	".spec.istioCSRConfig.istiodTLSConfig.certificateDuration",
	".spec.istioCSRConfig.istiodTLSConfig.certificateRenewBefore",
	".spec.istioCSRConfig.istiodTLSConfig.maxCertificateDuration",
	".spec.istioCSRConfig.resources",
}

// istioCSRConflictForced reports whether a field conflict names only fields
// the operator owns by re-serialising them: the apply then takes them over
// (force), since the operator never sets them itself (it writes no spec
// defaults: "The first Update re-serialises the spec" in the operator
// contracts guide), and otherwise every change of a duration after
// the operator first saw the object would need force_conflicts.
func istioCSRConflictForced(err error) bool {
	fields := kube.ConflictFields(err)
	if len(fields) == 0 {
		return false
	}
	for _, f := range fields {
		ok := false
		for _, prefix := range istioCSRReserialised {
			if f == prefix || strings.HasPrefix(f, prefix+".") || strings.HasPrefix(f, prefix+"[") {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
