package kube

import (
	"context"
	"errors"
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

// do runs op, retrying what a later attempt can fix. Every operation it wraps
// is idempotent (server-side apply, get, list, delete), so a retry after a
// lost response is safe.
func (c *Client) do(ctx context.Context, kind Kind, op func(context.Context) error) error {
	start := time.Now()
	wait := 100 * time.Millisecond
	for {
		err := op(ctx)
		if err == nil {
			return nil
		}
		var budget time.Duration
		switch {
		case kind.Plural != "" && isTypeNotFound(err):
			budget = crdGrace
		case isTransient(err):
			budget = transientBudget
		default:
			return err
		}
		if time.Since(start)+wait > budget {
			if kind.Plural != "" && isTypeNotFound(err) {
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

func isTransient(err error) bool {
	switch {
	case apierrors.IsTooManyRequests(err), apierrors.IsServiceUnavailable(err),
		apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), apierrors.IsInternalError(err):
		return true
	case utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), utilnet.IsProbableEOF(err):
		return true
	}
	return false
}
