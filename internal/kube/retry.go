package kube

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

const (
	// transientBudget bounds how long one call keeps retrying throttling,
	// unavailability and dropped connections before giving up.
	transientBudget = 30 * time.Second
	// crdGrace covers the window in which a CRD installed earlier in the same
	// apply is Established but its REST endpoint still answers 404.
	crdGrace = 10 * time.Second
)

// errClass says whether sending the same request again can change the answer.
type errClass int

const (
	// permanent answers are about the request itself (invalid object, field
	// the schema lacks, rule refused, no permission, conflict): the same
	// request gets the same answer, so it fails at once.
	permanent errClass = iota
	// retryable answers are about the server or the path to it: throttling,
	// overload, a server error that is not a schema error, a dropped or
	// refused connection.
	retryable
	// typeMissing is a 404 for the resource type itself: its CRD is absent,
	// or was installed moments ago and is not served yet.
	typeMissing
)

// schemaError matches what server-side apply answers (HTTP 500, no reason)
// when the object does not fit the CRD's structural schema: a field the
// schema does not declare, a value of the wrong type, duplicate list keys.
// The API server reports these as server errors, but they are properties of
// the request, and retrying them only delays the message (seen against
// kube-apiserver v1.35: `failed to create typed patch object (...):
// .spec.federation.bundleEndpoint.port: field not declared in schema`).
var schemaError = regexp.MustCompile(`failed to create typed (patch|live) object|to smd typed|field not declared in schema`)

// classify sorts an error from one API call into an errClass.
func classify(err error) errClass {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := int(status.Status().Code)
		switch {
		case isTypeNotFound(err):
			return typeMissing
		case isSchemaError(err):
			return permanent
		case code == http.StatusTooManyRequests, code >= 500 && code <= 599:
			return retryable
		}
		return permanent
	}
	if isTransportFailure(err) {
		return retryable
	}
	return permanent
}

// isSchemaError reports whether err is server-side apply refusing an object
// that does not fit the CRD's schema.
func isSchemaError(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	s := status.Status()
	return s.Code == http.StatusInternalServerError && schemaError.MatchString(s.Message)
}

// isTransportFailure reports whether err means the request or its answer was
// lost on the way: refused, reset or closed connections and timeouts. TLS
// verification failures and unresolvable names are configuration, not luck,
// so they are not retried.
func isTransportFailure(err error) bool {
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var dns *net.DNSError
	switch {
	case errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid):
		return false
	case errors.As(err, &dns):
		return dns.IsTimeout || dns.IsTemporary
	case errors.Is(err, context.Canceled):
		// Terraform was interrupted.
		return false
	case utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err),
		utilnet.IsHTTP2ConnectionLost(err), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return true
	}
	var nerr net.Error
	return errors.As(err, &nerr) && nerr.Timeout()
}

// do runs op, retrying what a later attempt can fix. Every operation it wraps
// is idempotent (server-side apply, get, list, delete), so a retry after a
// lost response is safe.
//
// Not client-go's retry.OnError with a wait.Backoff: a Backoff with a Cap
// ends its steps when the cap is reached (apimachinery wait's delay sets
// steps to 0), so "100 ms doubling to 2 s, then every 2 s until a time
// budget" cannot be expressed; without a cap the waits grow past the budget
// itself. The budget also differs per class (crdGrace, transientBudget),
// which a fixed step count cannot follow, and its sleep does not end with
// ctx. Not for size: util/retry adds nothing measurable to the release
// binary (bench/ANALYSIS.md). classify, the part that needs care, is shared
// with kube.Diagnostic.
//
// A cluster that does not answer at all is not retried: every call asks
// Reachable first (one bounded probe per walk) and fails at once with its
// *UnreachableError, and a transport failure of a cluster that answered
// before is rechecked once (recheck) before it gets the retry budget.
func (c *Client) do(ctx context.Context, kind Kind, op func(context.Context) error) error {
	if err := c.Reachable(ctx); err != nil {
		return err
	}
	start := time.Now()
	wait := 100 * time.Millisecond
	crdChecked, rechecked := false, false
	for {
		err := op(ctx)
		if err == nil {
			return nil
		}
		var budget time.Duration
		class := classify(err)
		if class == retryable && !rechecked && isTransportFailure(err) {
			rechecked = true
			if gone := c.recheck(ctx); gone != nil {
				return gone
			}
		}
		switch class {
		case typeMissing:
			if kind.Plural == "" {
				return err
			}
			if !crdChecked {
				// Waiting only helps when the CRD exists and is about to be
				// served; an absent CRD (or one without this version) fails now.
				crdChecked = true
				if nf := c.crdAbsent(ctx, kind, err); nf != nil {
					return nf
				}
			}
			budget = crdGrace
		case retryable:
			budget = transientBudget
		default:
			return err
		}
		if time.Since(start)+wait > budget {
			if class == typeMissing {
				return &CRDNotInstalledError{Kind: kind, Err: err}
			}
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(wait*2, 2*time.Second)
	}
}
