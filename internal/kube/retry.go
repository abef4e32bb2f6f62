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

// do runs op, retrying what a later attempt can fix. op is a read, or a
// write that is the same whether sent once or twice (a delete; see doWrite
// for the others).
//
// Not client-go's retry.OnError with a wait.Backoff: a Backoff with a Cap
// ends its steps when the cap is reached (apimachinery wait's delay sets
// steps to 0), so "100 ms doubling to 2 s, then every 2 s until a time
// budget" cannot be expressed; without a cap the waits grow past the budget
// itself. The budget also differs per class (crdGrace, transientBudget, the
// cluster's reconnect timeout), which a fixed step count cannot follow, and
// its sleep does not end with ctx. Not for size: util/retry adds nothing
// measurable to the release binary (bench/ANALYSIS.md). classify, the part
// that needs care, is shared with kube.Diagnostic.
//
// Two clusters that do not answer are told apart. One that does not answer
// when the walk first needs it is not retried: every call asks Reachable
// first (one bounded probe per walk) and fails at once with its
// *UnreachableError. One that answered and then stops (refused, reset or
// timed-out connections: an API server restarting) is waited for, by every
// request on it, until it answers again or the outage has lasted the
// client's reconnect timeout (notHeard); then this and every later request
// of the walk fail at once with its *OutageError. Requests on other
// clusters go on meanwhile: each client keeps its own outage.
func (c *Client) do(ctx context.Context, kind Kind, op func(context.Context) error) error {
	return c.doWrite(ctx, kind, op, nil)
}

// doWrite is do for a write that is not sent twice blindly: after an
// attempt that may have reached the API server before its connection broke,
// landed is asked first (it reads the object back, and reports whether the
// object already holds what op writes; the caller then takes that object as
// op's answer). op is sent again only when it does not.
func (c *Client) doWrite(ctx context.Context, kind Kind, op func(context.Context) error, landed func(context.Context) (bool, error)) error {
	if err := c.Reachable(ctx); err != nil {
		return err
	}
	if err := c.outageOver(); err != nil {
		return err
	}
	start := time.Now()
	wait := 100 * time.Millisecond
	crdChecked := false
	// unsure: a write attempt may have landed, and no read back has said
	// whether it did.
	unsure := false
	// lost is the last failure of an attempt the cluster did not answer,
	// other than one the outage's deadline cut short, for the error that
	// ends the wait.
	var lost error
	for {
		sending := landed != nil && !unsure
		step := op
		if landed != nil && unsure {
			step = func(ctx context.Context) error {
				done, err := landed(ctx)
				if err != nil || done {
					return err
				}
				sending = true
				return op(ctx)
			}
		}
		sent, err := c.attempt(ctx, step)
		if err == nil {
			return nil
		}
		var budget time.Duration
		class := classify(err)
		if ctx.Err() == nil && (class == retryable && isTransportFailure(err) || errors.Is(err, context.DeadlineExceeded)) {
			if sending {
				unsure = mayHaveLanded(err)
			}
			if lost == nil || !errors.Is(err, context.DeadlineExceeded) {
				lost = err
			}
			deadline, over := c.notHeard(ctx, sent, lost)
			if over != nil {
				return over
			}
			if !pause(ctx, min(wait, time.Until(deadline))) {
				return errors.Join(err, ctx.Err())
			}
			wait = min(wait*2, 2*time.Second)
			// The budgets below count from the cluster's answers.
			start = time.Now()
			continue
		}
		if c.settling(err) {
			if !pause(ctx, wait) {
				return errors.Join(err, ctx.Err())
			}
			wait = min(wait*2, 2*time.Second)
			continue
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
		if !pause(ctx, wait) {
			return errors.Join(err, ctx.Err())
		}
		wait = min(wait*2, 2*time.Second)
	}
}

// pause waits d, or less when ctx ends first: then it returns false.
func pause(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(max(d, 0)):
		return true
	}
}
