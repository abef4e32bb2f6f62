package kube

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/rbac"
)

// OpError records which call on which cluster failed, so the diagnostic can
// name the verb and resource RBAC needs.
type OpError struct {
	Cluster   string
	Verb      string
	Kind      Kind
	Namespace string
	Name      string
	Err       error
}

func (e *OpError) Error() string {
	target := e.Kind.Plural
	if e.Name != "" {
		target += "/" + e.Name
	}
	if e.Namespace != "" {
		target = e.Namespace + "/" + target
	}
	return fmt.Sprintf("%s %s on cluster %q: %v", e.Verb, target, e.Cluster, e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }

// CRDNotInstalledError says the cluster does not serve a kind at all.
type CRDNotInstalledError struct {
	Kind Kind
	Err  error
	// CRDPresent is true when the CustomResourceDefinition exists but serves
	// other versions (ServedVersions) than Kind's.
	CRDPresent     bool
	ServedVersions []string
}

func (e *CRDNotInstalledError) Error() string {
	if e.CRDPresent {
		return fmt.Sprintf("the cluster does not serve %s: CustomResourceDefinition %s is installed but serves %s, not %s",
			e.Kind, e.Kind.CRDName(), versionList(e.ServedVersions), e.Kind.Version)
	}
	return fmt.Sprintf("the cluster does not serve %s: CustomResourceDefinition %s is not installed", e.Kind, e.Kind.CRDName())
}

func (e *CRDNotInstalledError) Unwrap() error { return e.Err }

func versionList(vs []string) string {
	if len(vs) == 0 {
		return "no version"
	}
	return "only " + strings.Join(vs, ", ")
}

// IsCRDNotInstalled reports whether err means the kind's CRD is missing.
func IsCRDNotInstalled(err error) bool {
	var e *CRDNotInstalledError
	return errors.As(err, &e)
}

// IsFieldConflict reports whether err is server-side apply refusing to take
// fields another field manager owns.
func IsFieldConflict(err error) bool {
	return apierrors.IsConflict(err) && len(conflicts(err)) > 0
}

// IsUIDMismatch reports whether err is the API server refusing a write whose
// metadata.uid precondition no longer holds: the object of that name was
// deleted (and maybe created again) since it was read. The API server says
// so only in the message of a 409 Conflict.
func IsUIDMismatch(err error) bool {
	return apierrors.IsConflict(err) && strings.Contains(err.Error(), "uid mismatch")
}

// IsRejected reports whether the API server refused the object itself: a
// field its schema does not declare or a value of the wrong type, a value
// outside the schema's limits, a CEL rule (422 Invalid), or a malformed
// request (400). The same object is refused again however often it is sent.
func IsRejected(err error) bool {
	return isSchemaError(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)
}

var conflictManager = regexp.MustCompile(`conflicts? with "([^"]+)"`)

// Diagnostic turns an error from this package into one diagnostic whose
// detail says what to do about it. action reads like "create the
// ClusterFederatedTrustDomain" and starts the detail.
func Diagnostic(err error, action string) diag.Diagnostic {
	summary, detail := explain(err, action)
	return diag.NewErrorDiagnostic(summary, detail)
}

// ConflictWarning is the plan-time warning for a dry run that met a
// field-manager conflict: the apply will fail unless force_conflicts is set.
func ConflictWarning(err error) diag.Diagnostic {
	t := target(err)
	return diag.NewWarningDiagnostic("Apply Will Conflict With Another Field Manager", fmt.Sprintf(
		"The planned change to %s on cluster %q touches fields another field manager owns:\n%s\nThe apply will fail "+
			"with \"Field Manager Conflict\" unless force_conflicts = true is set on this resource (which takes "+
			"ownership of these fields), or the other tool stops managing them. This was found by a server-side apply "+
			"dry run; nothing was changed.", t.object, t.cluster, conflictList(err)))
}

// NotCheckedWarning is the warning for a plan-time check the cluster's RBAC
// did not let the provider make (err a 403 answer; ok is false for other
// errors, which plan-time checks leave to the apply): check reads like "that
// the Issuer exists". The plan goes on without the check.
func NotCheckedWarning(err error, check string) (diag.Diagnostic, bool) {
	sentence, ok := Refused(err)
	if !ok {
		return nil, false
	}
	return diag.NewWarningDiagnostic("Plan-Time Check Skipped", fmt.Sprintf(
		"Could not check %s: %s. The plan goes on without this check, so what it would have caught shows only when "+
			"the apply or the operator fails. Grant that verb on that resource to the identity Terraform uses (see the "+
			"Least privilege guide) to have the plan check it.\n\n%v", check, sentence, err)), true
}

// opTarget is what an OpError says about where a call went; group, plural
// and namespace are apart for the RBAC table.
type opTarget struct {
	cluster, verb, object    string
	group, plural, namespace string
}

// resource is the resource as RBAC names it in messages: "plural.group", or
// the plural alone in the core group.
func (t opTarget) resource() string {
	if t.group == "" {
		return t.plural
	}
	return t.plural + "." + t.group
}

// refusal matches the authorizer's reason in a 403 answer: `User "u"
// cannot create resource "pods/exec" in API group "" in the namespace "ns"`.
// It names the verb RBAC checked, which is not always the request's: a
// server-side apply of an object that does not exist yet is a PATCH that the
// API server also authorizes as create.
var refusal = regexp.MustCompile(`cannot (\S+) resource "([^"]+)" in API group "([^"]*)"(?: in the namespace "([^"]*)")?`)

func target(err error) opTarget {
	t := opTarget{cluster: "default", object: "the object"}
	var op *OpError
	if errors.As(err, &op) {
		t.cluster, t.verb = op.Cluster, op.Verb
		t.plural, t.group, t.namespace = op.Kind.Plural, op.Kind.Group, op.Namespace
		switch {
		case op.Name == "" && op.Kind.Kind != "":
			t.object = op.Kind.Kind + " objects"
		case op.Name != "" && op.Namespace != "":
			t.object = fmt.Sprintf("%s %q", op.Kind.Kind, op.Namespace+"/"+op.Name)
		case op.Name != "":
			t.object = fmt.Sprintf("%s %q", op.Kind.Kind, op.Name)
		}
	}
	// What RBAC checked, from its refusal, over what the provider asked.
	var status apierrors.APIStatus
	if apierrors.IsForbidden(err) && errors.As(err, &status) {
		if m := refusal.FindStringSubmatch(status.Status().Message); m != nil {
			t.verb, t.plural, t.group = m[1], m[2], m[3]
			if m[4] != "" {
				t.namespace = m[4]
			}
		}
	}
	return t
}

// refused names, in one sentence, what the cluster's RBAC refused: the
// verb, the resource with its API group, the object and the cluster.
func (t opTarget) refused() string {
	return fmt.Sprintf("the credentials used for cluster %q may not %q the resource %q (object: %s)",
		t.cluster, t.verb, t.resource(), t.object)
}

// Refused is the sentence naming what the cluster's RBAC refused when err is
// a 403 answer (see Diagnostic), for messages that go on without the answer
// (a warning where the provider degrades); ok is false for other errors.
func Refused(err error) (sentence string, ok bool) {
	if !apierrors.IsForbidden(err) {
		return "", false
	}
	return target(err).refused(), true
}

func explain(err error, action string) (string, string) {
	t := target(err)
	cluster := t.cluster
	var crd *CRDNotInstalledError
	if errors.As(err, &crd) {
		if crd.CRDPresent {
			return "CustomResourceDefinition Version Not Served", fmt.Sprintf(
				"Could not %s: on cluster %q the CustomResourceDefinition %q serves %s, and this provider needs %s. "+
					"Install the release of %s that serves %s.\n\n%v",
				action, cluster, crd.Kind.CRDName(), versionList(crd.ServedVersions), crd.Kind.APIVersion(),
				crd.Kind.ProvidedBy, crd.Kind.Version, err)
		}
		return "CustomResourceDefinition Not Installed", fmt.Sprintf(
			"Could not %s: cluster %q does not serve %s. Install the CustomResourceDefinition %q, provided by %s, "+
				"and apply again. When the CRD is installed in the same configuration, make this resource depend on it.\n\n%v",
			action, cluster, crd.Kind, crd.Kind.CRDName(), crd.Kind.ProvidedBy, err)
	}

	switch {
	case isSchemaError(err):
		return "Field Not in the Cluster's Schema", fmt.Sprintf(
			"Could not %s: the API server of cluster %q refused %s because the CustomResourceDefinition installed "+
				"there does not declare these fields, or declares another type for them:\n%s\nThe CRD on the cluster "+
				"belongs to another release of the operator than the one this provider supports. Upgrade the operator "+
				"(which updates its CRD), or remove the attribute from the configuration. Retrying does not help.\n\n%v",
			action, cluster, t.object, schemaCauses(err), err)
	case apierrors.IsInvalid(err):
		return "Cluster Rejected the Object", fmt.Sprintf(
			"Could not %s: the API server of cluster %q rejected %s as invalid (the limits or validation rules of "+
				"its CustomResourceDefinition, or an admission policy of the cluster). The fields and rules at fault:\n%s\nChange the configuration so that "+
				"these rules hold; retrying does not help.\n\n%v", action, cluster, t.object, invalidCauses(err), err)
	case apierrors.IsBadRequest(err):
		return "Cluster Rejected the Request", fmt.Sprintf(
			"Could not %s: the API server of cluster %q refused the request for %s as malformed. Retrying does not "+
				"help; if the configuration is valid, this is a bug in the provider: please report it with this "+
				"message.\n\n%v", action, cluster, t.object, err)
	case apierrors.IsForbidden(err):
		grant := rbac.Grant(t.group, t.plural, t.verb, t.namespace)
		if grant != "" {
			grant = " " + grant
		}
		return "Forbidden by the Cluster's RBAC", fmt.Sprintf(
			"Could not %s: %s. Grant that verb on that resource to the identity Terraform uses (a ClusterRole and "+
				"binding), or use other credentials.%s\n\n%v",
			action, t.refused(), grant, err)
	case apierrors.IsUnauthorized(err):
		return "Cluster Rejected the Credentials", fmt.Sprintf(
			"Could not %s: cluster %q did not accept the credentials (expired token, wrong client certificate, or "+
				"an exec plugin that returned nothing). Check the provider's connection settings for this cluster.\n\n%v",
			action, cluster, err)
	case IsFieldConflict(err):
		return "Field Manager Conflict", fmt.Sprintf(
			"Could not %s: fields this resource sets on %s on cluster %q are owned by another field manager:\n%s\n"+
				"Either stop the other tool from managing these fields, or set force_conflicts = true on this "+
				"resource to take ownership of them.\n\n%v",
			action, t.object, cluster, conflictList(err), err)
	case IsUnreachable(err):
		var u *UnreachableError
		errors.As(err, &u)
		return "Cluster Unreachable", fmt.Sprintf(
			"Could not %s: cluster %q at %s did not answer (no connection, no TLS handshake, or no HTTP answer "+
				"within %s), so the provider asked it nothing more in this run and did not retry: nothing was "+
				"written to it. Resources on other clusters that do not depend on this one are applied as usual. Check that the API server is up "+
				"and reachable from where Terraform runs, then apply again.\n\n%v", action, u.Cluster, u.Host,
			PlanReachTimeout, u.Err)
	case IsOutage(err):
		var o *OutageError
		errors.As(err, &o)
		return "Cluster Stopped Answering", fmt.Sprintf(
			"Could not %s: cluster %q at %s answered earlier in this run, then stopped answering (refused, reset or "+
				"timed-out connections, as while its API server restarts) and did not answer again within the "+
				"provider's reconnect_timeout of %s: the provider waited %s for it, then failed this and every "+
				"remaining request on it at once. Requests on other clusters went on. What was written to the cluster "+
				"before it stopped is kept: the next apply resumes where this one stopped, once the API server answers "+
				"again (it finds those objects and does not create them twice). If the cluster's restarts take "+
				"longer (a managed control-plane upgrade), raise reconnect_timeout.\n\n%v",
			action, o.Cluster, o.Host, o.Bound, o.Waited.Round(100*time.Millisecond), o.Err)
	case classify(err) == retryable:
		return "Cluster Unavailable", fmt.Sprintf(
			"Could not %s: cluster %q did not answer successfully, even after retries (throttled, unavailable, or "+
				"unreachable). Check that the API server is up and reachable from where Terraform runs, then apply "+
				"again: nothing is half-applied.\n\n%v", action, cluster, err)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return "Cannot Reach the Cluster", fmt.Sprintf(
			"Could not %s: the API server of cluster %q could not be reached. Check the host, the CA certificate "+
				"and any proxy settings.\n\n%v", action, cluster, err)
	}
	return "Kubernetes API Error", fmt.Sprintf("Could not %s (%s) on cluster %q.\n\n%v", action, t.object, cluster, err)
}

// conflicts maps each conflicting field manager to the fields it owns, from
// the causes of a 409 answer to server-side apply (or, without causes, from
// its message).
func conflicts(err error) map[string][]string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return nil
	}
	out := map[string][]string{}
	if d := status.Status().Details; d != nil {
		for _, c := range d.Causes {
			if c.Type != metav1.CauseTypeFieldManagerConflict {
				continue
			}
			for _, m := range conflictManager.FindAllStringSubmatch(c.Message, -1) {
				out[m[1]] = append(out[m[1]], c.Field)
			}
		}
	}
	if len(out) == 0 {
		for _, m := range conflictManager.FindAllStringSubmatch(status.Status().Message, -1) {
			out[m[1]] = nil
		}
	}
	return out
}

// ConflictFields lists the fields (".spec.a.b") a field conflict names,
// across managers; nil when err is not a conflict or names no fields.
func ConflictFields(err error) []string {
	var out []string
	for _, fields := range conflicts(err) {
		out = append(out, fields...)
	}
	return out
}

// conflictList is one line per manager: the manager and the fields it owns.
func conflictList(err error) string {
	c := conflicts(err)
	managers := make([]string, 0, len(c))
	for m := range c {
		managers = append(managers, m)
	}
	sort.Strings(managers)
	var b strings.Builder
	for _, m := range managers {
		fields := c[m]
		sort.Strings(fields)
		if len(fields) == 0 {
			fmt.Fprintf(&b, "  - manager %q\n", m)
			continue
		}
		fmt.Fprintf(&b, "  - manager %q owns %s\n", m, strings.Join(fields, ", "))
	}
	return strings.TrimRight(b.String(), "\n")
}

func invalidCauses(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 {
		return "  (no details)"
	}
	var b strings.Builder
	for _, c := range status.Status().Details.Causes {
		if c.Field == "" {
			fmt.Fprintf(&b, "  - %s\n", c.Message)
			continue
		}
		fmt.Fprintf(&b, "  - %s: %s\n", c.Field, c.Message)
	}
	return strings.TrimRight(b.String(), "\n")
}

// schemaCauses lists the fields of a schema error, one per line. The API
// server puts them after the object's description, as structured-merge-diff
// formats them: ".spec.a.b: field not declared in schema", several under an
// "errors:" heading.
func schemaCauses(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return "  (no details)"
	}
	msg := status.Status().Message
	if i := strings.Index(msg, "): "); i >= 0 {
		msg = msg[i+3:]
	}
	var b strings.Builder
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line == "errors:" {
			continue
		}
		fmt.Fprintf(&b, "  - %s\n", line)
	}
	if b.Len() == 0 {
		return "  (no details)"
	}
	return strings.TrimRight(b.String(), "\n")
}
