// Package spireexec runs `spire-server` commands in a SPIRE server pod
// through pod exec: the only way to ask SPIRE what it holds (federated
// bundles, federation relationships) when its admin API is a Unix socket
// inside the pod. Waits poll, because spire-controller-manager and SPIRE's
// bundle manager act asynchronously and none of them reports readiness in a
// Kubernetes status.
package spireexec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// PollInterval is how often the waits ask again. Asking sooner does not
// end them sooner: spire-controller-manager stores a new object's bundle
// most of a second after the write, and a backoff from 250 ms was measured
// to end later than this (bench/ANALYSIS.md, "Scale in clusters").
const PollInterval = time.Second

// Server is a SPIRE server pod. Build it with NewServer.
type Server struct {
	Client                    *kube.Client
	Namespace, Pod, Container string
	// OnRetry, when set, is called with each failed attempt a wait will
	// retry, so that callers can report progress.
	OnRetry func(err error)
}

// NewServer is the SPIRE server pod on client's cluster in namespace. It
// knows no defaults: which pod and container a cluster's SPIRE runs in
// depends on how it was installed, which the provider's configuration says
// (providerdata.Spire), so callers pass what it resolved.
func NewServer(client *kube.Client, namespace, pod, container string) Server {
	return Server{Client: client, Namespace: namespace, Pod: pod, Container: container}
}

// String names the pod in messages.
func (s Server) String() string {
	return fmt.Sprintf("SPIRE server pod %s/%s (container %s) on cluster %q", s.Namespace, s.Pod, s.Container, s.Client.DisplayName())
}

// Key tells the pod from the other SPIRE servers of its cluster: what one
// Terraform graph walk learns of a server is kept per cluster, under Key.
func (s Server) Key() string {
	return s.Namespace + "/" + s.Pod + "/" + s.Container
}

// Run runs `spire-server args...` in the pod and returns its standard
// output. A non-zero exit returns an error wrapping *kube.ExitError whose
// Stderr is what SPIRE answered. Run does not retry.
func (s Server) Run(ctx context.Context, args ...string) ([]byte, error) {
	stdout, _, err := s.Client.Exec(ctx, s.Namespace, s.Pod, s.Container, append([]string{"spire-server"}, args...))
	return stdout, err
}

// Refresh asks SPIRE to fetch the bundle of trust domain td from its
// federation bundle endpoint now (`spire-server federation refresh`) instead
// of at its next scheduled refresh. Failures that may pass (the peer's
// endpoint unreachable, the pod restarting) are retried until ctx ends; a
// missing federation relationship and exec failures no retry fixes are
// returned at once (IsPermanent reports them).
func (s Server) Refresh(ctx context.Context, td string) error {
	return s.poll(ctx, func(ctx context.Context) (bool, error) {
		_, err := s.Run(ctx, RefreshArgs(td)...)
		if err == nil {
			return true, nil
		}
		if IsPermanent(err) {
			return false, err
		}
		return false, retry(err)
	}, func(ctxErr, last error) error {
		return fmt.Errorf("%s could not refresh the bundle of %q: %w (last answer: %v)", s, td, ctxErr, last)
	})
}

// WaitForBundle polls until SPIRE holds the bundle of td (`spire-server
// bundle list -id spiffe://<td>` succeeds): the readiness signal
// ClusterFederatedTrustDomain lacks (its status is empty, and the controller
// reconciles asynchronously).
func (s Server) WaitForBundle(ctx context.Context, td string) error {
	return s.poll(ctx, func(ctx context.Context) (bool, error) {
		_, err := s.Run(ctx, BundleListArgs(td)...)
		if err == nil {
			return true, nil
		}
		if permanentExecError(err) {
			return false, err
		}
		return false, retry(err)
	}, func(ctxErr, last error) error {
		return fmt.Errorf("%s still does not hold the bundle of %q: %w (last answer: %v)", s, td, ctxErr, last)
	})
}

// DeleteBundle removes td's bundle once spire-controller-manager has removed
// the federation relationship; deleting it earlier would let SPIRE fetch it
// again from the peer's endpoint. Registration entries that federate with td
// lose it (-mode dissociate): the default mode refuses while any does, and
// those are the entries whose trust the delete is meant to end.
func (s Server) DeleteBundle(ctx context.Context, td string) error {
	return s.poll(ctx, func(ctx context.Context) (bool, error) {
		_, err := s.Run(ctx, "federation", "show", "-trustDomain", td)
		switch {
		case IsNotFoundExit(err):
			_, err = s.Run(ctx, BundleDeleteArgs(td, BundleDeleteDissociate)...)
			if err == nil || IsNotFoundExit(err) {
				return true, nil
			}
			return false, retry(err)
		case err == nil:
			return false, retry(fmt.Errorf("the federation relationship with %q still exists", td))
		case permanentExecError(err):
			return false, err
		default:
			return false, retry(err)
		}
	}, func(ctxErr, last error) error {
		return fmt.Errorf("could not delete the bundle of %q from %s: %w (last answer: %v)", td, s, ctxErr, last)
	})
}

// Modes of `spire-server bundle delete`: what happens to the registration
// entries that federate with the trust domain whose bundle goes.
const (
	// BundleDeleteRestrict refuses the delete while any entry federates
	// with the trust domain (SPIRE's default).
	BundleDeleteRestrict = "restrict"
	// BundleDeleteDissociate removes the trust domain from those entries'
	// federates_with; the entries stay.
	BundleDeleteDissociate = "dissociate"
)

// BundleDeleteArgs are the spire-server arguments that delete td's bundle
// in mode.
func BundleDeleteArgs(td, mode string) []string {
	return []string{"bundle", "delete", "-id", "spiffe://" + td, "-mode", mode}
}

// RemoveBundle deletes td's bundle in mode, for a bundle that no federation
// relationship keeps (one set by `bundle set`): unlike DeleteBundle, nothing
// would fetch it again, so there is nothing to wait for. A bundle already
// gone is no error. SPIRE's refusal (restrict while entries federate with
// td) is returned at once, quoted; failures that may pass (the pod
// restarting) are retried until ctx ends.
func (s Server) RemoveBundle(ctx context.Context, td, mode string) error {
	args := BundleDeleteArgs(td, mode)
	return s.poll(ctx, func(ctx context.Context) (bool, error) {
		_, err := s.Run(ctx, args...)
		var exit *kube.ExitError
		switch {
		case err == nil || IsNotFoundExit(err):
			return true, nil
		case errors.As(err, &exit):
			return false, fmt.Errorf("`spire-server %s` failed: %s", strings.Join(args, " "), OneLine(exit.Stderr))
		case permanentExecError(err):
			return false, err
		default:
			return false, retry(err)
		}
	}, func(ctxErr, last error) error {
		return fmt.Errorf("could not delete the bundle of %q from %s: %w (last answer: %v)", td, s, ctxErr, last)
	})
}

// RefreshArgs are the spire-server arguments of Refresh.
func RefreshArgs(td string) []string {
	return []string{"federation", "refresh", "-id", "spiffe://" + td}
}

// BundleListArgs are the spire-server arguments of WaitForBundle.
func BundleListArgs(td string) []string {
	return []string{"bundle", "list", "-id", "spiffe://" + td}
}

// retryable marks an attempt's failure that poll retries.
type retryable struct{ err error }

func (r retryable) Error() string { return r.err.Error() }
func (r retryable) Unwrap() error { return r.err }

func retry(err error) error { return retryable{err} }

// poll runs try every PollInterval until it is done, fails with an error
// not marked retryable, or ctx ends; then timedOut turns ctx's error and the
// last retryable failure into the error returned.
func (s Server) poll(ctx context.Context, try func(context.Context) (bool, error), timedOut func(ctxErr, last error) error) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, PollInterval, true, func(ctx context.Context) (bool, error) {
		done, err := try(ctx)
		var r retryable
		if errors.As(err, &r) {
			// An attempt cut short by ctx says less than the one before it.
			if last == nil || (ctx.Err() == nil && !cutShortByDeadline(r.err)) {
				last = r.err
			}
			if s.OnRetry != nil {
				s.OnRetry(r.err)
			}
			return false, nil
		}
		return done, err
	})
	if err == nil || !wait.Interrupted(err) {
		return err
	}
	ctxErr := ctx.Err()
	if ctxErr == nil {
		ctxErr = err
	}
	return timedOut(ctxErr, last)
}

// cutShortByDeadline reports an attempt that never reached the API server
// because ctx's deadline was nearer than the client's rate limiter would
// wait: golang.org/x/time/rate's Limiter.Wait (behind client-go's request
// throttle) refuses with "rate: Wait(n=1) would exceed context deadline"
// before ctx itself ends. It says nothing about SPIRE.
func cutShortByDeadline(err error) bool {
	return err != nil && strings.Contains(err.Error(), "would exceed context deadline")
}

// IsNotFoundExit reports a spire-server CLI failure because the thing asked
// for does not exist: the CLI prints the gRPC NotFound status
// ("code = NotFound desc = federation relationship does not exist") or, for
// batch calls, "bundle not found".
func IsNotFoundExit(err error) bool {
	text, ok := exitText(err)
	return ok && (strings.Contains(text, "code = notfound") || strings.Contains(text, "not found"))
}

// IsNoRelationship reports `spire-server federation refresh` refusing
// because SPIRE has no federation relationship with the trust domain.
func IsNoRelationship(err error) bool {
	text, ok := exitText(err)
	return ok && (strings.Contains(text, "no federation relationship") || strings.Contains(text, "no relationship"))
}

// IsUnknownAuthority reports `spire-server federation refresh` failing
// because the bundle SPIRE holds cannot authenticate the peer's https_spiffe
// endpoint: SPIRE quotes Go's x509.UnknownAuthorityError ("x509: certificate
// signed by unknown authority", crypto/x509) from its bundle client. The
// peer's CA changed (a forced rotation, a rebuilt server) while SPIRE could
// not follow; no refresh with that bundle ever succeeds, only a new one.
func IsUnknownAuthority(err error) bool {
	text, ok := exitText(err)
	return ok && strings.Contains(text, "certificate signed by unknown authority")
}

// IsPermanent reports a failure no retry fixes: no such container, no right
// to exec, no federation relationship to refresh, or a held bundle that
// cannot authenticate the endpoint.
func IsPermanent(err error) bool {
	return permanentExecError(err) || IsNoRelationship(err) || IsUnknownAuthority(err)
}

func permanentExecError(err error) bool {
	return errors.Is(err, kube.ErrContainerNotFound) || apierrors.IsForbidden(err)
}

func exitText(err error) (string, bool) {
	var exit *kube.ExitError
	if !errors.As(err, &exit) {
		return "", false
	}
	return strings.ToLower(exit.Stderr), true
}
