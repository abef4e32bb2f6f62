// Package domainverification reads and writes Kuadrant DomainVerification
// objects (kuadrant.dev) in both API shapes: v1, whose status is {token,
// verified, lastChecked, nextCheck, message}, and v1alpha1, whose status is
// {token, conditions[type=Verified]}. The resource, the data source and the
// tests' stand-in controller share it, so they read status the same way.
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
	// status.verified and no Verified condition).
	Verified    *bool
	LastChecked string
	NextCheck   string
	Message     string
}

// StatusOf reads status: v1 fields first, the Verified condition otherwise
// (its lastTransitionTime stands in for lastChecked).
func StatusOf(obj *unstructured.Unstructured) Status {
	st, _, _ := unstructured.NestedMap(obj.Object, "status")
	str := func(m map[string]any, k string) string {
		v, _ := m[k].(string)
		return v
	}
	s := Status{Token: str(st, "token"), LastChecked: str(st, "lastChecked"), NextCheck: str(st, "nextCheck"), Message: str(st, "message")}
	if v, ok := st["verified"].(bool); ok {
		s.Verified = &v
	}
	conditions, _ := st["conditions"].([]any)
	for _, c := range conditions {
		cond, ok := c.(map[string]any)
		if !ok || str(cond, "type") != ConditionVerified {
			continue
		}
		if s.Verified == nil {
			v := str(cond, "status") == "True"
			s.Verified = &v
		}
		if s.LastChecked == "" {
			s.LastChecked = str(cond, "lastTransitionTime")
		}
		if s.Message == "" {
			s.Message = str(cond, "message")
		}
	}
	return s
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
