package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// PlanReachTimeout bounds the one request that tells a walk whether a
// cluster answers at all (see Reachable). A live API server answers
// /version in milliseconds; an address where nothing listens fails at once,
// and one that accepts connections but never answers (a firewall that
// drops, a hung server) fails at this bound, not at the 10 s of client-go's
// TLS handshake timeout nor the reconnect timeout a cluster that answered
// before gets (DefaultReconnectTimeout).
const PlanReachTimeout = 3 * time.Second

// UnreachableError says a cluster did not answer at all: no connection, no
// TLS handshake, or no response within PlanReachTimeout.
type UnreachableError struct {
	Cluster string // as DisplayName says it
	Host    string // the API server's address
	Err     error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cluster %q (%s) did not answer within %s: %v", e.Cluster, e.Host, PlanReachTimeout, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// IsUnreachable reports whether err says its cluster did not answer at all.
func IsUnreachable(err error) bool {
	var u *UnreachableError
	return errors.As(err, &u)
}

// Reachable asks the API server for /version once per client (one Terraform
// graph walk), one attempt bounded by PlanReachTimeout, and returns an
// *UnreachableError when no HTTP answer came back. Any answer, even a
// refusal (401, 403) or a server error, counts as reachable: the requests
// that follow report those themselves.
//
// Every request of the client asks it first (do), so a dead cluster costs
// one walk this bound once, whatever the number of resources, data sources
// and checks on it: each of them then fails at once with the same error
// instead of waiting out a TLS handshake and the retry budget. A cluster
// that answered here and stops answering later in the walk is not dead but
// restarting, and is waited for (do, notHeard): the answer is never
// replaced.
func (c *Client) Reachable(ctx context.Context) error {
	c.reach.mu.Lock()
	defer c.reach.mu.Unlock()
	if !c.reach.asked {
		c.reach.asked = true
		c.reach.err = c.probe(ctx)
		if c.reach.err == nil {
			c.heard(ctx)
		}
	}
	return c.reach.err
}

// probe is one GET /version bounded by PlanReachTimeout. Only a failure
// of the path to the server makes the cluster unreachable (refused, reset
// or dropped connections, no TLS handshake or answer within the bound:
// isTransportFailure); a certificate that does not verify or a name that
// does not resolve is configuration, which the requests themselves report
// as errors whatever on_unreachable says.
func (c *Client) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, PlanReachTimeout)
	defer cancel()
	err := c.raw.Get().AbsPath("/version").Do(ctx).Error()
	var status apierrors.APIStatus
	if err == nil || errors.As(err, &status) || !isTransportFailure(err) {
		return nil
	}
	return &UnreachableError{Cluster: c.DisplayName(), Host: c.rest.Host, Err: err}
}
