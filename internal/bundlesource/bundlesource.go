// Package bundlesource reads a trust domain's SPIFFE bundle from the places
// SPIRE publishes it: its federation bundle endpoint, the bundle ConfigMap
// its BundlePublisher "k8s_configmap" or Notifier "k8sbundle" keeps current
// (configmap.go), or the server itself through pod
// exec of `spire-server bundle show`. Read retries a source until a deadline,
// because a SPIRE server restarting (after a federation change, or a new
// pod) is a normal, short-lived state.
package bundlesource

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"
	"github.com/spiffe/go-spiffe/v2/federation"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// EndpointSPIFFEIDProblem is the one rule tying a bundle endpoint profile to
// its endpoint SPIFFE ID: https_spiffe authenticates the endpoint by that ID,
// so it is required; https_web authenticates with Web PKI, so it must be
// unset (spire-controller-manager skips such objects). It returns an empty
// summary when idSet fits the profile, else a diagnostic summary and detail
// (the caller names the attribute); trustDomain, when known, makes the
// suggested ID concrete.
func EndpointSPIFFEIDProblem(profile string, idSet bool, trustDomain string) (summary, detail string) {
	switch {
	case profile == spireexec.ProfileHTTPSSPIFFE && !idSet:
		if trustDomain == "" {
			trustDomain = "<trust_domain>"
		}
		return "Missing Endpoint SPIFFE ID", "the https_spiffe profile authenticates the bundle endpoint by the SPIFFE ID " +
			"it presents, so endpoint_spiffe_id is required, usually \"spiffe://" + trustDomain + "/spire/server\"."
	case profile == spireexec.ProfileHTTPSWeb && idSet:
		return "Endpoint SPIFFE ID Not Applicable", "the https_web profile authenticates the bundle endpoint with Web PKI, " +
			"so endpoint_spiffe_id must not be set (spire-controller-manager skips such objects). Remove it, or use the " +
			"https_spiffe profile."
	}
	return "", ""
}

// Source is one place to read a trust bundle from.
type Source interface {
	// Fetch reads the bundle once. Errors that a later attempt cannot fix
	// are marked with Permanent.
	Fetch(ctx context.Context, td spiffeid.TrustDomain) (*spiffebundle.Bundle, error)
	// String names the source in messages.
	String() string
}

type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err as one that retrying cannot fix (a wrong key, a
// document that is not a bundle, missing permissions), so Read stops early.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// TimeoutError is a source that did not yield a bundle before the deadline.
type TimeoutError struct {
	Source   string
	Timeout  time.Duration
	Attempts int
	Last     error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("no bundle from %s after %d attempts in %v; last error: %v", e.Source, e.Attempts, e.Timeout, e.Last)
}

func (e *TimeoutError) Unwrap() error { return e.Last }

// Backoff bounds of Read, and the longest one attempt may take (a server
// that accepts connections and never answers must not use up the timeout).
const (
	firstBackoff   = 250 * time.Millisecond
	maxBackoff     = 5 * time.Second
	attemptTimeout = 30 * time.Second
)

// Read fetches from src until it yields a bundle, an error is permanent, or
// timeout passes (then a *TimeoutError carrying the last error). It waits
// between attempts with exponential backoff, never past the deadline.
func Read(ctx context.Context, src Source, td spiffeid.TrustDomain, timeout time.Duration) (*spiffebundle.Bundle, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var (
		bundle   *spiffebundle.Bundle
		last     error
		attempts int
	)
	backoff := wait.Backoff{Duration: firstBackoff, Factor: 2, Cap: maxBackoff, Steps: math.MaxInt32}
	err := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		attempts++
		attemptCtx, cancelAttempt := context.WithTimeout(ctx, attemptTimeout)
		b, err := src.Fetch(attemptCtx, td)
		cancelAttempt()
		switch {
		case err == nil:
			bundle = b
			return true, nil
		case IsPermanent(err), kube.IsUnreachable(err), kube.IsOutage(err):
			// A cluster the run found dead, or waited for past its
			// reconnect timeout, is not asked again within the run
			// (kube.Client.Reachable, kube.OutageError): waiting out the
			// timeout would only delay the same answer.
			return false, err
		}
		// An attempt cut short by the deadline says less than the one before.
		if ctx.Err() == nil || last == nil {
			last = err
		}
		return false, nil
	})
	if err != nil && (wait.Interrupted(err) || ctx.Err() != nil) {
		return nil, &TimeoutError{Source: src.String(), Timeout: timeout, Attempts: attempts, Last: last}
	}
	return bundle, err
}

// Endpoint is a SPIFFE federation bundle endpoint.
type Endpoint struct {
	URL     string
	Profile string // spireexec.ProfileHTTPSSPIFFE or spireexec.ProfileHTTPSWeb
	// EndpointID and Bootstrap authenticate an https_spiffe endpoint: it must
	// present an X.509-SVID for EndpointID that Bootstrap (a bundle of
	// EndpointID's trust domain) verifies.
	EndpointID spiffeid.ID
	Bootstrap  *spiffebundle.Bundle
	// Roots verify an https_web endpoint; nil means the system roots.
	Roots *x509.CertPool
}

func (e Endpoint) String() string {
	if e.Profile == spireexec.ProfileHTTPSSPIFFE {
		return fmt.Sprintf("bundle endpoint %s (https_spiffe, endpoint SPIFFE ID %s)", e.URL, e.EndpointID)
	}
	return fmt.Sprintf("bundle endpoint %s (https_web)", e.URL)
}

// Fetch implements Source with go-spiffe's federation.FetchBundle.
func (e Endpoint) Fetch(ctx context.Context, td spiffeid.TrustDomain) (*spiffebundle.Bundle, error) {
	var opt federation.FetchOption
	switch e.Profile {
	case spireexec.ProfileHTTPSSPIFFE:
		if e.Bootstrap == nil || e.EndpointID.IsZero() {
			return nil, Permanent(errors.New("the https_spiffe profile needs a bootstrap bundle and the endpoint's SPIFFE ID"))
		}
		opt = federation.WithSPIFFEAuth(e.Bootstrap, e.EndpointID)
	case spireexec.ProfileHTTPSWeb:
		if e.Roots != nil {
			opt = federation.WithWebPKIRoots(e.Roots)
		}
	default:
		return nil, Permanent(fmt.Errorf("unknown bundle endpoint profile %q", e.Profile))
	}
	var opts []federation.FetchOption
	if opt != nil {
		opts = append(opts, opt)
	}
	return federation.FetchBundle(ctx, td, e.URL, opts...)
}

// FetchRelationship asks the bundle endpoint of a federation relationship
// for td's bundle once, authenticating an https_spiffe endpoint with anchor
// (for SPIRE, the bundle it holds of the endpoint SPIFFE ID's trust domain).
// The caller bounds it with ctx.
func FetchRelationship(ctx context.Context, rel spireexec.Endpoint, td spiffeid.TrustDomain, anchor *spiffebundle.Bundle) (*spiffebundle.Bundle, error) {
	src := Endpoint{URL: rel.URL, Profile: rel.Profile}
	if rel.Profile == spireexec.ProfileHTTPSSPIFFE {
		id, err := spiffeid.FromString(rel.EndpointID)
		if err != nil {
			return nil, fmt.Errorf("endpoint SPIFFE ID %q: %w", rel.EndpointID, err)
		}
		src.EndpointID, src.Bootstrap = id, anchor
	}
	return src.Fetch(ctx, td)
}

// Decode reads a bundle in either format SPIRE publishes: SPIFFE bundle
// JSON, or PEM CERTIFICATE blocks (X.509 authorities only).
func Decode(td spiffeid.TrustDomain, data []byte) (*spiffebundle.Bundle, error) {
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("-----BEGIN ")) {
		return trustbundle.ParsePEM(td, data)
	}
	return trustbundle.Parse(td, data)
}

// SpireServer reads the bundle a SPIRE server pod holds: the pod as
// spireexec names it, read as a Source.
type SpireServer spireexec.Server

// BundleShowCommand is what SpireServer runs in the container.
var BundleShowCommand = []string{"spire-server", "bundle", "show", "-format", "spiffe"}

// String names the source: the pod as spireexec.Server names it everywhere,
// and the command that reads the bundle there.
func (s SpireServer) String() string {
	return spireexec.Server(s).String() + ", `" + strings.Join(BundleShowCommand, " ") + "`"
}

// Fetch implements Source. A missing pod or a failing command is worth
// retrying (the pod or server may be restarting); missing permissions and a
// missing container are not.
func (s SpireServer) Fetch(ctx context.Context, td spiffeid.TrustDomain) (*spiffebundle.Bundle, error) {
	stdout, _, err := s.Client.Exec(ctx, s.Namespace, s.Pod, s.Container, BundleShowCommand)
	if err != nil {
		var exit *kube.ExitError
		if errors.As(err, &exit) {
			return nil, err
		}
		if errors.Is(err, kube.ErrContainerNotFound) {
			return nil, Permanent(err)
		}
		return nil, classifyAPIError(err)
	}
	b, err := trustbundle.Parse(td, stdout)
	if err != nil {
		return nil, Permanent(fmt.Errorf("output of `%s`: %w", strings.Join(BundleShowCommand, " "), err))
	}
	return b, nil
}

// classifyAPIError marks API errors that waiting cannot fix.
func classifyAPIError(err error) error {
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
		return Permanent(err)
	}
	return err
}

// ParseCertificates reads PEM CERTIFICATE blocks into a pool, refusing other
// blocks and trailing garbage.
func ParseCertificates(data string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	rest := []byte(data)
	n := 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("PEM block %d is a %q block; only CERTIFICATE blocks are allowed", n, block.Type)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d is not a valid X.509 certificate: %w", n, err)
		}
		pool.AddCert(cert)
		n++
	}
	if bytes.Contains(rest, []byte("-----BEGIN ")) {
		return nil, errors.New("the PEM data has a malformed or truncated block after the last complete one")
	}
	if n == 0 {
		return nil, errors.New("no PEM CERTIFICATE block found")
	}
	return pool, nil
}

// IsUnknownAuthority reports a fetch refused because the endpoint's
// certificate does not chain to the bundle that was to authenticate it: the
// endpoint answered, but its CA is not one the bundle holds (the peer's CA
// changed: a forced rotation, a rebuilt server). go-spiffe wraps the
// verifier's x509.UnknownAuthorityError with %w all the way up
// (x509svid.Verify, "could not verify leaf certificate"), and crypto/tls and
// net/http pass a VerifyPeerCertificate error on as it is.
func IsUnknownAuthority(err error) bool {
	var unknown x509.UnknownAuthorityError
	return errors.As(err, &unknown)
}
