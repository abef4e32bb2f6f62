package kube

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// PlanReachTimeout bounds the one request that tells a plan whether a
// cluster answers at all (see Reachable). A live API server answers
// /version in milliseconds; an address where nothing listens fails at once,
// and one that accepts connections but never answers (a firewall that
// drops, a hung server) fails at this bound, not at the 30 s of retries a
// request of the apply is allowed (transientBudget).
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

// Reachable asks the API server for /version once per client (one Terraform
// graph walk), one attempt bounded by PlanReachTimeout, and returns an
// *UnreachableError when no HTTP answer came back. Any answer, even a
// refusal (401, 403) or a server error, counts as reachable: the checks that
// follow report those themselves. It serves plan-time checks, which are a
// courtesy the apply repeats: asking first, once, keeps a dead cluster from
// holding every check of the plan for its own timeout and retries, and
// gives the plan one place to say the cluster was not asked.
func (c *Client) Reachable(ctx context.Context) error {
	c.reach.once.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, PlanReachTimeout)
		defer cancel()
		err := c.raw.Get().AbsPath("/version").Do(ctx).Error()
		var status apierrors.APIStatus
		if err != nil && !errors.As(err, &status) {
			c.reach.err = &UnreachableError{Cluster: c.DisplayName(), Host: c.rest.Host, Err: err}
		}
	})
	return c.reach.err
}
