package kube

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// DefaultReconnectTimeout is how long a run waits, by default, for a cluster
// that answered earlier in the run and then stopped answering (an API
// server restart, a control-plane upgrade, a load balancer that moved its
// backends, a certificate reload): long enough for such a restart, which
// refuses connections for seconds, short enough that a cluster gone for
// good fails the run within a minute. The provider's reconnect_timeout sets
// it.
const DefaultReconnectTimeout = 60 * time.Second

// OutageError says a cluster answered earlier in the run, then stopped
// answering and did not answer again within the bound: the provider waited
// Waited for it and asks it nothing more in this run.
type OutageError struct {
	Cluster string        // as DisplayName says it
	Host    string        // the API server's address
	Waited  time.Duration // from the first request it did not answer
	Bound   time.Duration // the reconnect timeout that ran out
	Err     error         // the last request's failure
}

func (e *OutageError) Error() string {
	return fmt.Sprintf("cluster %q (%s) answered earlier in this run, then stopped answering and did not answer again "+
		"within %s (waited %s): %v", e.Cluster, e.Host, e.Bound, e.Waited.Round(100*time.Millisecond), e.Err)
}

func (e *OutageError) Unwrap() error { return e.Err }

// IsOutage reports whether err says its cluster stopped answering in the
// middle of the run and did not come back within the reconnect timeout.
func IsOutage(err error) bool {
	var o *OutageError
	return errors.As(err, &o)
}

// outage is what a client knows of its cluster's answers since the probe
// found it answering (Reachable): when it last answered, since when it has
// not (zero while it answers), and, once the reconnect timeout ran out, the
// error every later request of the walk returns at once.
type outage struct {
	mu       sync.Mutex
	answered time.Time
	since    time.Time
	over     *OutageError
	// settleUntil ends the window after an outage in which refusals of the
	// credentials are retried (settling).
	settleUntil time.Time
}

// settleGrace is how long, at most, after a cluster answers again, a 401 or
// 403 answer is taken for its API server still starting rather than for the
// credentials' rights: a kube-apiserver serves requests as soon as it
// listens, and refuses them until its authenticators and RBAC authorizer
// have loaded what they check against (seen against kube-apiserver v1.35:
// "cannot get resource" for a service account bound to cluster-admin, for
// about a second after a restart). A refusal that holds past it is
// reported as the refusal it is.
const settleGrace = 10 * time.Second

// reconnectTimeout is the client's bound on an outage.
func (c *Client) reconnectTimeout() time.Duration {
	if c.ReconnectTimeout > 0 {
		return c.ReconnectTimeout
	}
	return DefaultReconnectTimeout
}

// outageOver is the error of an outage that outlasted the reconnect
// timeout earlier in the walk, nil otherwise.
func (c *Client) outageOver() error {
	c.outage.mu.Lock()
	defer c.outage.mu.Unlock()
	if c.outage.over == nil {
		return nil
	}
	return c.outage.over
}

// heard records an HTTP answer from the cluster (any status): it ends an
// outage in progress.
func (c *Client) heard(ctx context.Context) {
	c.outage.mu.Lock()
	defer c.outage.mu.Unlock()
	c.outage.answered = time.Now()
	if !c.outage.since.IsZero() {
		tflog.Warn(ctx, "cluster answers again", map[string]any{"cluster": c.DisplayName(),
			"host": c.rest.Host, "after": time.Since(c.outage.since).Round(time.Millisecond).String()})
		c.outage.settleUntil = time.Now().Add(settleGrace)
		if end := c.outage.since.Add(c.reconnectTimeout()); end.Before(c.outage.settleUntil) {
			c.outage.settleUntil = end
		}
	}
	c.outage.since = time.Time{}
}

// settling reports whether err refuses the credentials (401, 403) in the
// first moments after an outage, while a restarted API server may not
// know them yet (settleGrace): such a refusal is retried, not reported.
func (c *Client) settling(err error) bool {
	if !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) {
		return false
	}
	c.outage.mu.Lock()
	defer c.outage.mu.Unlock()
	return time.Now().Before(c.outage.settleUntil)
}

// notHeard records that an attempt sent at sent got no answer (err, a
// transport failure) and returns when the outage it belongs to runs out. The
// outage started when the cluster last answered or when the attempt was
// sent, whichever is later: an attempt that hung until a timeout counts from
// when it was sent. It returns the outage's error instead once the bound has
// run out, then also for every later request (outageOver).
func (c *Client) notHeard(ctx context.Context, sent time.Time, err error) (time.Time, error) {
	c.outage.mu.Lock()
	defer c.outage.mu.Unlock()
	if c.outage.over != nil {
		return time.Time{}, c.outage.over
	}
	bound := c.reconnectTimeout()
	if c.outage.since.IsZero() {
		c.outage.since = sent
		if c.outage.answered.After(sent) {
			c.outage.since = c.outage.answered
		}
		tflog.Warn(ctx, "cluster stopped answering; waiting for it", map[string]any{"cluster": c.DisplayName(),
			"host": c.rest.Host, "reconnect_timeout": bound.String(), "error": err.Error()})
	}
	deadline := c.outage.since.Add(bound)
	if !time.Now().Before(deadline) {
		c.outage.over = &OutageError{Cluster: c.DisplayName(), Host: c.rest.Host, Waited: time.Since(c.outage.since),
			Bound: bound, Err: err}
		return time.Time{}, c.outage.over
	}
	return deadline, nil
}

// inOutage reports the deadline of the outage in progress, zero when the
// cluster answers: an attempt sent meanwhile gets no longer than that (a
// frozen server would hold it until a TCP or HTTP/2 timeout).
func (c *Client) inOutage() time.Time {
	c.outage.mu.Lock()
	defer c.outage.mu.Unlock()
	if c.outage.since.IsZero() {
		return time.Time{}
	}
	return c.outage.since.Add(c.reconnectTimeout())
}

// attempt runs op once, bounded by the deadline of an outage in progress,
// and tells the client whether the cluster answered.
func (c *Client) attempt(ctx context.Context, op func(context.Context) error) (sent time.Time, err error) {
	sent = time.Now()
	if deadline := c.inOutage(); !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	err = op(ctx)
	var status apierrors.APIStatus
	if err == nil || errors.As(err, &status) {
		c.heard(ctx)
	}
	return sent, err
}

// mayHaveLanded reports whether a write that failed with err may have
// reached the API server: a refused connection never sent it.
func mayHaveLanded(err error) bool {
	return !utilnet.IsConnectionRefused(err)
}
