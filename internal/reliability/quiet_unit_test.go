package reliability

import (
	"reflect"
	"testing"
)

// TestApplyProblems: the quiet-apply check flags warnings, errors and
// throttling, and not digits that happen to be in the suite's directory.
func TestApplyProblems(t *testing.T) {
	const dir = "/tmp/zerotrust-reliability-1842917429"
	out := `
Warning: Provider development overrides are in effect
 - ztfabric/zerotrust in ` + dir + `/provider
zerotrust_federated_trust_domain.thr[4]: Creation complete after 0s [id=throttled/thr-4]
│ Warning: Plan-Time Check Skipped
│ Error: Too Many Requests
client rate limiter Wait returned an error
the server answered 429 to a GET
Apply complete! Resources: 30 added, 0 changed, 0 destroyed.
`
	want := []string{
		"Warning: Plan-Time Check Skipped",
		"Error: Too Many Requests",
		"client rate limiter Wait returned an error",
		"the server answered 429 to a GET",
	}
	if got := applyProblems(out, dir); !reflect.DeepEqual(got, want) {
		t.Errorf("applyProblems =\n%q\nwant\n%q", got, want)
	}
}
