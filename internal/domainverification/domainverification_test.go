package domainverification

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func withStatus(domain string, status map[string]any) unstructured.Unstructured {
	obj := Object(domain, domain)
	if status != nil {
		obj.Object["status"] = status
	}
	return *obj
}

func verifiedCond(domain, status, next string) map[string]any {
	c := map[string]any{"type": ConditionVerified, "status": status, "message": domain + " " + status,
		"lastTransitionTime": "2026-01-02T03:04:05Z"}
	if domain != "" {
		c["domain"] = domain
	}
	if next != "" {
		c["nextVerification"] = next
	}
	return c
}

func TestStatusFor_v1alpha1PicksTheConditionOfTheDomain(t *testing.T) {
	// The status example of Kuadrant's custom-domain design: the first
	// Verified condition is for another domain.
	obj := withStatus("mydomain.com", map[string]any{"token": "t", "conditions": []any{
		verifiedCond("myotherdomain.com", "True", "2026-01-02T04:00:00Z"),
		verifiedCond("mydomain.com", "False", "2026-01-02T03:10:00Z"),
	}})
	st := StatusOf(&obj)
	if st.Verified == nil || *st.Verified {
		t.Fatalf("verified = %v, want false (the condition of mydomain.com)", st.Verified)
	}
	if st.NextCheck != "2026-01-02T03:10:00Z" || st.Message != "mydomain.com False" {
		t.Errorf("next = %q, message = %q: read from the wrong condition", st.NextCheck, st.Message)
	}
	if other := StatusFor(&obj, "myotherdomain.com"); other.Verified == nil || !*other.Verified {
		t.Errorf("StatusFor(myotherdomain.com).Verified = %v, want true", other.Verified)
	}
	if none := StatusFor(&obj, "third.com"); none.Verified != nil {
		t.Errorf("StatusFor(third.com).Verified = %v, want nil", *none.Verified)
	}
}

func TestStatusFor_conditionWithoutDomainIsTheObjectsOwn(t *testing.T) {
	obj := withStatus("a.example.com", map[string]any{"token": "t", "conditions": []any{verifiedCond("", "True", "")}})
	if v := StatusOf(&obj).Verified; v == nil || !*v {
		t.Fatalf("verified = %v, want true", v)
	}
	if v := StatusFor(&obj, "b.example.com").Verified; v != nil {
		t.Errorf("an unnamed condition answered for another domain: %v", *v)
	}
	named := withStatus("a.example.com", map[string]any{"conditions": []any{
		verifiedCond("", "True", ""), verifiedCond("a.example.com", "False", ""),
	}})
	if v := StatusOf(&named).Verified; v == nil || *v {
		t.Errorf("verified = %v, want false: a named condition wins over an unnamed one", v)
	}
}

func TestStatusFor_v1(t *testing.T) {
	obj := withStatus("a.example.com", map[string]any{"token": "t", "verified": true, "lastChecked": "L", "nextCheck": "N", "message": "M"})
	st := StatusOf(&obj)
	if st.Verified == nil || !*st.Verified || st.LastChecked != "L" || st.NextCheck != "N" || st.Message != "M" || st.Token != "t" {
		t.Errorf("StatusOf = %+v", st)
	}
	if st := StatusOf(&unstructured.Unstructured{Object: map[string]any{}}); st.Verified != nil || st.Token != "" {
		t.Errorf("empty object: %+v", st)
	}
}

func TestCoveredBy(t *testing.T) {
	deleting := withStatus("gone.com", map[string]any{"verified": true})
	now := metav1.Now()
	deleting.SetDeletionTimestamp(&now)
	objs := []unstructured.Unstructured{
		withStatus("example.com", map[string]any{"verified": true}),
		withStatus("apps.example.com", map[string]any{"verified": true}),
		withStatus("unverified.com", map[string]any{"verified": false}),
		withStatus("alpha.org", map[string]any{"conditions": []any{verifiedCond("alpha.org", "True", "")}}),
		withStatus("beta.org", map[string]any{"conditions": []any{verifiedCond("other.org", "True", "")}}),
		deleting,
	}
	for domain, want := range map[string]string{
		"x.apps.example.com": "apps.example.com", // the nearest parent
		"other.example.com":  "example.com",
		"example.com":        "", // a domain does not cover itself
		"badexample.com":     "", // a suffix that is no parent
		"a.unverified.com":   "",
		"a.alpha.org":        "alpha.org",
		"a.beta.org":         "", // its condition is for another domain
		"a.gone.com":         "",
	} {
		got, by := CoveredBy(objs, domain)
		if got != want || (want == "") != (by == nil) || by != nil && Domain(by) != want {
			t.Errorf("CoveredBy(%q) = %q, %v; want %q", domain, got, by, want)
		}
	}
}
