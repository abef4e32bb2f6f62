package spireexec

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// exit wraps a spire-server failure as kube.Client.Exec returns it.
func exit(stderr string) error {
	return &kube.OpError{Cluster: "east", Verb: "create", Kind: kube.Pod, Namespace: "spire", Name: "spire-server-0",
		Err: fmt.Errorf("exec: %w", &kube.ExitError{Code: 1, Stderr: stderr})}
}

func TestClassify(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "pods/exec"}, "spire-server-0", errors.New("no"))
	for _, tc := range []struct {
		name                                string
		err                                 error
		notFound, noRelationship, permanent bool
	}{
		// What spire-server v1.15 prints (cmd/spire-server/cli/federation, bundle).
		{name: "federation show, none", err: exit(`Error: rpc error: code = NotFound desc = federation relationship does not exist`), notFound: true},
		{name: "bundle delete, none", err: exit(`Error: failed to delete bundle: bundle not found`), notFound: true},
		{name: "refresh, no relationship", err: exit(`Error: there is no federation relationship with trust domain "spiffe://peer.test"`),
			noRelationship: true, permanent: true},
		{name: "refresh, endpoint down", err: exit(`Error: failed to refresh bundle: rpc error: code = Internal desc = failed to refresh bundle: connection refused`)},
		// The endpoint's CA is not in the bundle SPIRE holds (Go's x509.UnknownAuthorityError, quoted).
		{name: "refresh, unknown authority", err: exit(`Error: rpc error: code = Internal desc = failed to refresh bundle: ` +
			`Get "https://127.0.0.1:8443": x509svid: could not verify leaf certificate: x509: certificate signed by unknown authority`),
			permanent: true},
		{name: "no container", err: &kube.OpError{Err: fmt.Errorf("%w: pod has no container", kube.ErrContainerNotFound)}, permanent: true},
		{name: "forbidden", err: forbidden, permanent: true},
		{name: "not an exit", err: errors.New("not found")},
		{name: "nil", err: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsNotFoundExit(tc.err); got != tc.notFound {
				t.Errorf("IsNotFoundExit = %v, want %v", got, tc.notFound)
			}
			if got := IsNoRelationship(tc.err); got != tc.noRelationship {
				t.Errorf("IsNoRelationship = %v, want %v", got, tc.noRelationship)
			}
			if got := IsPermanent(tc.err); got != tc.permanent {
				t.Errorf("IsPermanent = %v, want %v", got, tc.permanent)
			}
		})
	}
}

func TestArgs(t *testing.T) {
	if got, want := RefreshArgs("peer.test"), []string{"federation", "refresh", "-id", "spiffe://peer.test"}; !slices.Equal(got, want) {
		t.Errorf("RefreshArgs = %q, want %q", got, want)
	}
	if got, want := BundleListArgs("peer.test"), []string{"bundle", "list", "-id", "spiffe://peer.test"}; !slices.Equal(got, want) {
		t.Errorf("BundleListArgs = %q, want %q", got, want)
	}
}

func TestPoll(t *testing.T) {
	timedOut := func(ctxErr, last error) error { return fmt.Errorf("gave up: %w (last answer: %v)", ctxErr, last) }

	t.Run("retries until done, reporting each retry", func(t *testing.T) {
		var retried []string
		s := Server{OnRetry: func(err error) { retried = append(retried, err.Error()) }}
		n := 0
		err := s.poll(context.Background(), func(context.Context) (bool, error) {
			n++
			if n < 3 {
				return false, retry(fmt.Errorf("attempt %d", n))
			}
			return true, nil
		}, timedOut)
		if err != nil || n != 3 || !slices.Equal(retried, []string{"attempt 1", "attempt 2"}) {
			t.Fatalf("err %v after %d attempts, retried %q", err, n, retried)
		}
	})

	t.Run("permanent failure at once", func(t *testing.T) {
		refused := errors.New("refused")
		n := 0
		err := Server{}.poll(context.Background(), func(context.Context) (bool, error) { n++; return false, refused }, timedOut)
		if !errors.Is(err, refused) || n != 1 {
			t.Fatalf("err %v after %d attempts, want refused after 1", err, n)
		}
	})

	t.Run("deadline names the last answer", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err := Server{}.poll(ctx, func(context.Context) (bool, error) {
			return false, retry(errors.New("bundle not found"))
		}, timedOut)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "last answer: bundle not found") {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("an attempt the rate limiter refused for the deadline is not the last answer", func(t *testing.T) {
		// Two attempts: at once and one PollInterval later.
		ctx, cancel := context.WithTimeout(context.Background(), PollInterval+PollInterval/2)
		defer cancel()
		n := 0
		err := Server{}.poll(ctx, func(context.Context) (bool, error) {
			n++
			if n == 1 {
				return false, retry(errors.New("bundle not found"))
			}
			// What client-go's throttle returns when ctx's deadline is nearer
			// than its wait (golang.org/x/time/rate).
			return false, retry(errors.New("rate: Wait(n=1) would exceed context deadline"))
		}, timedOut)
		if n < 2 || !strings.Contains(err.Error(), "last answer: bundle not found") {
			t.Fatalf("err = %v after %d attempts, want SPIRE's last answer after 2", err, n)
		}
	})
}

// TestServerKey: Key tells servers of one cluster apart by namespace, pod
// and container alike, so walk state never shares one server's answer with
// another.
func TestServerKey(t *testing.T) {
	s := NewServer(nil, "spire", "spire-server-0", "spire-server")
	keys := map[string]Server{}
	for _, other := range []Server{s, NewServer(nil, "spire2", "spire-server-0", "spire-server"),
		NewServer(nil, "spire", "spire-server-1", "spire-server"), NewServer(nil, "spire", "spire-server-0", "other")} {
		if prev, ok := keys[other.Key()]; ok {
			t.Errorf("%+v and %+v share the key %q", prev, other, other.Key())
		}
		keys[other.Key()] = other
	}
	if NewServer(nil, "spire", "spire-server-0", "spire-server").Key() != s.Key() {
		t.Error("the same pod has two keys")
	}
}
