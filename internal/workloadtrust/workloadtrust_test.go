package workloadtrust

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestParseEntries(t *testing.T) {
	out := []byte(`{"entries":[{"id":"cm.abc","spiffe_id":{"trust_domain":"east.test","path":"/ns/apps/sa/web"},
		"selectors":[{"type":"k8s","value":"pod-uid:u1"}],"federates_with":["west.test"]}]}`)
	entries, err := ParseEntries(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].SPIFFEID != "spiffe://east.test/ns/apps/sa/web" ||
		entries[0].Selectors[0] != "k8s:pod-uid:u1" || entries[0].FederatesWith[0] != "west.test" {
		t.Fatalf("parsed %+v", entries)
	}
	if _, err := ParseEntries([]byte("not json")); err == nil {
		t.Fatal("no error for output that is not JSON")
	}
}

func TestEntryProblems(t *testing.T) {
	pods := []Pod{{Namespace: "apps", Name: "web-0", UID: "u1"}, {Namespace: "apps", Name: "web-1", UID: "u2"}, {Namespace: "apps", Name: "web-2", UID: "u3"}}
	entries := []Entry{
		{ID: "a", SPIFFEID: "spiffe://east.test/web", Selectors: []string{"k8s:pod-uid:u1"}, FederatesWith: []string{"north.test", "west.test"}},
		{ID: "b", SPIFFEID: "spiffe://east.test/web", Selectors: []string{"k8s:pod-uid:u2"}, FederatesWith: []string{"west.test"}},
	}
	problems := EntryProblems(pods, entries, []string{"west.test", "north.test"})
	if len(problems) != 2 {
		t.Fatalf("problems %v, want two (u2 lacks north.test, u3 has no entry)", problems)
	}
	if p := problems[0]; p.TrustDomain != "north.test" || !strings.Contains(p.String(), "entry b") {
		t.Errorf("first problem %q", p)
	}
	if p := problems[1]; p.TrustDomain != "" || !strings.Contains(p.String(), "pod apps/web-2") {
		t.Errorf("second problem %q", p)
	}
	if got := EntryProblems(pods[:1], entries, []string{"west.test"}); len(got) != 0 {
		t.Errorf("problems %v for a pod whose entry federates", got)
	}
}

func TestRenderProblemsAndDescribe(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"stats": map[string]any{
		"podsSelected": int64(2), "entryFailures": int64(1),
	}}}}
	if st := StatsOf(obj); st.PodsSelected != 2 || st.EntryFailures != 1 {
		t.Fatalf("stats %+v", st)
	}
	problems := renderProblems(obj)
	if len(problems) != 1 || !strings.Contains(problems[0].String(), "entryFailures") {
		t.Fatalf("problems %v", problems)
	}
	text := Describe(map[string][]Problem{"web": append(problems, Problem{Step: StepBundle, TrustDomain: "west.test"})})
	if !strings.Contains(text, `ClusterSPIFFEID "web": spire-controller-manager: SPIRE refused 1`) ||
		!strings.Contains(text, `holds no bundle of "west.test"`) {
		t.Fatalf("description %q", text)
	}
	if Describe(map[string][]Problem{"web": nil}) != "" {
		t.Fatal("a description without problems")
	}
}
