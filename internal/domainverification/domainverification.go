// Package domainverification reads and writes Kuadrant DomainVerification
// objects (kuadrant.dev) in both API shapes: v1, whose status is {token,
// verified, lastChecked, nextCheck, message}, and v1alpha1, whose status is
// {token, conditions[type=Verified]} with one condition per domain (each
// naming its `domain`, with `nextVerification`). The resource, the data
// source and the tests' stand-in controller share it, so they read status
// the same way.
package domainverification

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// API versions of kuadrant.dev DomainVerification.
const (
	V1       = "v1"
	V1Alpha1 = "v1alpha1"
	// ConditionVerified is the v1alpha1 condition type.
	ConditionVerified = "Verified"
)

// APIVersions are the accepted values of `api_version`.
var APIVersions = []string{V1, V1Alpha1}

// Kind is the kube.Kind for an `api_version` value (v1 when empty).
func Kind(apiVersion string) kube.Kind {
	if apiVersion == V1Alpha1 {
		return kube.DomainVerificationV1Alpha1
	}
	return kube.DomainVerificationV1
}

// DefaultName is the object name used when none is given: the domain itself,
// which DomainName validation keeps a valid object name.
func DefaultName(domain string) string { return domain }

// Object is the desired object: only spec.domain is set by the provider.
func Object(name, domain string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"domain": domain}}}
	obj.SetName(name)
	return obj
}

// Domain is spec.domain.
func Domain(obj *unstructured.Unstructured) string {
	v, _, _ := unstructured.NestedString(obj.Object, "spec", "domain")
	return v
}

// Status is what the controller reports, in either shape.
type Status struct {
	Token string
	// Verified is nil while the controller has given no verdict (no
	// status.verified and no Verified condition for the domain).
	Verified    *bool
	LastChecked string
	// NextCheck is when the controller checks again: v1 status.nextCheck,
	// or the v1alpha1 condition's nextVerification.
	NextCheck string
	Message   string
}

// StatusOf reads the status of the object's own domain (spec.domain).
func StatusOf(obj *unstructured.Unstructured) Status { return StatusFor(obj, Domain(obj)) }

// StatusFor reads status for domain: v1 fields first, otherwise the
// v1alpha1 Verified condition whose `domain` is domain. The v1alpha1 shape
// lists one Verified condition per domain, so a condition for another domain
// never answers; a condition without `domain` (written before the field
// existed) stands for the object's own domain, and only when no condition
// names it. The condition's lastTransitionTime stands in for lastChecked.
func StatusFor(obj *unstructured.Unstructured, domain string) Status {
	st, _, _ := unstructured.NestedMap(obj.Object, "status")
	s := Status{Token: str(st, "token"), LastChecked: str(st, "lastChecked"), NextCheck: str(st, "nextCheck"), Message: str(st, "message")}
	if v, ok := st["verified"].(bool); ok {
		s.Verified = &v
	}
	cond := VerifiedCondition(obj, domain)
	if cond == nil {
		return s
	}
	if s.Verified == nil {
		v := str(cond, "status") == "True"
		s.Verified = &v
	}
	if s.LastChecked == "" {
		s.LastChecked = str(cond, "lastTransitionTime")
	}
	if s.NextCheck == "" {
		s.NextCheck = str(cond, "nextVerification")
	}
	if s.Message == "" {
		s.Message = str(cond, "message")
	}
	return s
}

// VerifiedCondition is the v1alpha1 Verified condition for domain: the one
// whose `domain` is domain, or else, for the object's own domain, the first
// one without `domain`. Nil when there is none.
func VerifiedCondition(obj *unstructured.Unstructured, domain string) map[string]any {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var unnamed map[string]any
	for _, c := range conditions {
		cond, ok := c.(map[string]any)
		if !ok || str(cond, "type") != ConditionVerified {
			continue
		}
		switch d, named := cond["domain"].(string); {
		case named && d == domain:
			return cond
		case !named && unnamed == nil:
			unnamed = cond
		}
	}
	if domain != Domain(obj) {
		return nil
	}
	return unnamed
}

// Verified reports whether the controller has verified the object's own
// domain. Objects being deleted verify nothing.
func Verified(obj *unstructured.Unstructured) bool {
	v := StatusOf(obj).Verified
	return obj.GetDeletionTimestamp() == nil && v != nil && *v
}

// CoveredBy is the verified domain among objs that covers domain, a proper
// parent of it (Kuadrant's custom-domain design: subdomains of a verified domain need no
// verification of their own), and the object verifying it: the nearest such
// parent, "" and nil when none.
func CoveredBy(objs []unstructured.Unstructured, domain string) (string, *unstructured.Unstructured) {
	var parent string
	var by *unstructured.Unstructured
	for i := range objs {
		d := Domain(&objs[i])
		if d == "" || !strings.HasSuffix(domain, "."+d) || len(d) <= len(parent) || !Verified(&objs[i]) {
			continue
		}
		parent, by = d, &objs[i]
	}
	return parent, by
}

func str(m map[string]any, k string) string {
	v, _ := m[k].(string)
	return v
}

// CreatedWith is the API version ("v1" or "v1alpha1") in which the object's
// spec was first written, read from its managed fields; "v1" when unknown.
// Import uses it, because the API version is not part of the object itself.
func CreatedWith(obj *unstructured.Unstructured) string {
	for _, f := range obj.GetManagedFields() {
		if f.Subresource != "" || f.FieldsV1 == nil || !strings.Contains(string(f.FieldsV1.Raw), `"f:spec"`) {
			continue
		}
		if _, version, ok := strings.Cut(f.APIVersion, "/"); ok && version == V1Alpha1 {
			return V1Alpha1
		}
		return V1
	}
	return V1
}
