package kube

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
}

func (e *CRDNotInstalledError) Error() string {
	return fmt.Sprintf("the cluster does not serve %s: CustomResourceDefinition %s is not installed", e.Kind, e.Kind.CRDName())
}

func (e *CRDNotInstalledError) Unwrap() error { return e.Err }

// IsCRDNotInstalled reports whether err means the kind's CRD is missing.
func IsCRDNotInstalled(err error) bool {
	var e *CRDNotInstalledError
	return errors.As(err, &e)
}

var conflictManager = regexp.MustCompile(`conflict with "([^"]+)"`)

// Diagnostic turns an error from this package into one diagnostic whose
// detail says what to do about it. action reads like "create the
// ClusterFederatedTrustDomain" and starts the detail.
func Diagnostic(err error, action string) diag.Diagnostic {
	summary, detail := explain(err, action)
	return diag.NewErrorDiagnostic(summary, detail)
}

func explain(err error, action string) (string, string) {
	var op *OpError
	cluster, verb, resource := "default", "", ""
	if errors.As(err, &op) {
		cluster, verb = op.Cluster, op.Verb
		resource = op.Kind.Plural
		if op.Kind.Group != "" {
			resource += "." + op.Kind.Group
		}
	}
	var crd *CRDNotInstalledError
	if errors.As(err, &crd) {
		return "CustomResourceDefinition Not Installed", fmt.Sprintf(
			"Could not %s: cluster %q does not serve %s. Install the CustomResourceDefinition %q, provided by %s, "+
				"and apply again. When the CRD is installed in the same configuration, make this resource depend on it.\n\n%v",
			action, cluster, crd.Kind, crd.Kind.CRDName(), crd.Kind.ProvidedBy, err)
	}

	switch {
	case apierrors.IsForbidden(err):
		return "Forbidden by the Cluster's RBAC", fmt.Sprintf(
			"Could not %s: the credentials used for cluster %q may not %q the resource %q. Grant that verb on that "+
				"resource to the identity Terraform uses (a ClusterRole and binding), or use other credentials.\n\n%v",
			action, cluster, verb, resource, err)
	case apierrors.IsUnauthorized(err):
		return "Cluster Rejected the Credentials", fmt.Sprintf(
			"Could not %s: cluster %q did not accept the credentials (expired token, wrong client certificate, or "+
				"an exec plugin that returned nothing). Check the provider's connection settings for this cluster.\n\n%v",
			action, cluster, err)
	case apierrors.IsConflict(err) && len(conflictManagers(err)) > 0:
		managers := conflictManagers(err)
		return "Field Manager Conflict", fmt.Sprintf(
			"Could not %s: fields this resource sets on cluster %q are owned by another field manager (%s). "+
				"Either stop the other tool from managing these fields, or set force_conflicts = true on this "+
				"resource to take ownership of them.\n\n%v",
			action, cluster, strings.Join(managers, ", "), err)
	case apierrors.IsInvalid(err):
		return "Cluster Rejected the Object", fmt.Sprintf(
			"Could not %s: the API server of cluster %q rejected the object as invalid. The fields and rules at "+
				"fault:\n%s\n\n%v", action, cluster, invalidCauses(err), err)
	case isTransient(err):
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
	return "Kubernetes API Error", fmt.Sprintf("Could not %s on cluster %q.\n\n%v", action, cluster, err)
}

func conflictManagers(err error) []string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return nil
	}
	seen := map[string]bool{}
	for _, m := range conflictManager.FindAllStringSubmatch(status.Status().Message, -1) {
		seen[m[1]] = true
	}
	if d := status.Status().Details; d != nil {
		for _, c := range d.Causes {
			if c.Type == metav1.CauseTypeFieldManagerConflict {
				for _, m := range conflictManager.FindAllStringSubmatch(c.Message, -1) {
					seen[m[1]] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, fmt.Sprintf("%q", m))
	}
	sort.Strings(out)
	return out
}

func invalidCauses(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return "  (no details)"
	}
	var b strings.Builder
	for _, c := range status.Status().Details.Causes {
		fmt.Fprintf(&b, "  - %s: %s\n", c.Field, c.Message)
	}
	return strings.TrimRight(b.String(), "\n")
}
