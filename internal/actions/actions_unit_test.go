package actions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/dnscheck"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
)

// A wait retries once a second; progress says so when the answer changes
// and otherwise every progressEvery, not every second.
func TestProgressThrottlesRetries(t *testing.T) {
	var sent []string
	p := newProgress(func(e action.InvokeProgressEvent) { sent = append(sent, e.Message) })
	now := p.start
	p.now = func() time.Time { return now }
	for i := range 25 {
		now = p.start.Add(time.Duration(i+1) * time.Second)
		answer := "bundle not found"
		if i >= 20 {
			answer = "connection refused"
		}
		p.retrying(errors.New(answer))
	}
	want := []string{
		"Still trying after 1s: bundle not found",
		"Still trying after 11s: bundle not found",
		"Still trying after 21s: connection refused",
	}
	if strings.Join(sent, "\n") != strings.Join(want, "\n") {
		t.Errorf("sent:\n%s\nwant:\n%s", strings.Join(sent, "\n"), strings.Join(want, "\n"))
	}
}

func TestRefreshFailure(t *testing.T) {
	server := spireexec.Server{Client: &kube.Client{Name: "east"}, Namespace: "spire", Pod: "spire-server-0", Container: "spire-server"}
	exit := func(stderr string) error {
		return &kube.OpError{Cluster: "east", Err: fmt.Errorf("exec: %w", &kube.ExitError{Code: 1, Stderr: stderr})}
	}
	for _, tc := range []struct {
		err          error
		summary, has string
	}{
		{exit(`Error: there is no federation relationship with trust domain "spiffe://peer.test"`), "No Federation Relationship",
			`there is no federation relationship with trust domain "spiffe://peer.test"`},
		{&kube.OpError{Err: kube.ErrContainerNotFound}, "Cannot Run spire-server in the Pod", "no such container"},
		{fmt.Errorf("gave up: %w (last answer: connection refused)", context.DeadlineExceeded), "Bundle Refresh Timed Out",
			"last answer: connection refused"},
		{errors.New("other"), "Bundle Refresh Failed", "other"},
	} {
		summary, detail := refreshFailure(server, "peer.test", time.Minute, tc.err)
		if summary != tc.summary || !strings.Contains(detail, tc.has) || !strings.Contains(detail, "spire/spire-server-0") {
			t.Errorf("refreshFailure(%v) = %q, %q; want %q with %q and the pod", tc.err, summary, detail, tc.summary, tc.has)
		}
	}
}

func TestDomainCheckMessages(t *testing.T) {
	res := &dnscheck.Result{Name: "a.dv.test", Zone: "dv.test", Servers: []dnscheck.ServerResult{
		{Server: dnscheck.Server{Addr: "127.0.0.1:5301"}, Status: dnscheck.StatusAnswer, Values: []string{"tok"}},
		{Server: dnscheck.Server{Addr: "127.0.0.1:5302"}, Status: dnscheck.StatusAnswer, Values: []string{"old"}},
		{Server: dnscheck.Server{Addr: "127.0.0.1:5303"}, Status: dnscheck.StatusNXDomain},
	}}
	if got, want := serverLine(res.Servers[0], "tok"), "127.0.0.1:5301 serves the token"; got != want {
		t.Errorf("serverLine = %q, want %q", got, want)
	}
	if got, want := serverLine(res.Servers[1], "tok"), `127.0.0.1:5302 does not serve the token: TXT "old"`; got != want {
		t.Errorf("serverLine = %q, want %q", got, want)
	}
	detail := notServedDetail(res, "tok", "the configured token")
	for _, want := range []string{
		`The TXT record a.dv.test must hold the configured token, "tok", on every authoritative server of the zone dv.test. 2 of 3`,
		`  - 127.0.0.1:5301: TXT "tok"`,
		`  - 127.0.0.1:5302: TXT "old"`,
		`  - 127.0.0.1:5303: NXDOMAIN`,
	} {
		if !strings.Contains(detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, detail)
		}
	}
}
