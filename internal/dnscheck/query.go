package dnscheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/miekg/dns"
	"k8s.io/apimachinery/pkg/util/wait"
)

// exchange sends one question, over UDP and again over TCP when the answer
// was truncated. Timeouts, network errors and SERVFAIL are retried with
// backoff, up to Attempts times; other answers are returned as they are.
func (c *Checker) exchange(ctx context.Context, server, name string, qtype uint16, recursive bool) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = recursive
	m.SetEdns0(ednsBufferSize, false)

	var answer *dns.Msg
	var lastErr error
	attempts := 0
	backoff := wait.Backoff{Duration: c.opts.Backoff, Factor: 2, Steps: c.opts.Attempts}
	// The outcome is in answer, lastErr and attempts: the error returned only
	// says that the attempts ran out or ctx ended, which attempts tells apart.
	_ = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		attempts++
		resp, err := c.exchangeOnce(ctx, server, m)
		switch {
		case err != nil:
			lastErr = err
		case resp.Rcode == dns.RcodeServerFailure:
			lastErr = fmt.Errorf("%s answered SERVFAIL for %s", server, trimDot(name))
		default:
			answer = resp
			return true, nil
		}
		return false, nil
	})
	switch {
	case answer != nil:
		return answer, nil
	case attempts >= c.opts.Attempts:
		return nil, fmt.Errorf("%w (after %d attempts)", lastErr, attempts)
	case lastErr == nil:
		return nil, fmt.Errorf("querying %s: %w", server, ctx.Err())
	}
	return nil, fmt.Errorf("%w (stopped: %w)", lastErr, ctx.Err())
}

func (c *Checker) exchangeOnce(ctx context.Context, server string, m *dns.Msg) (*dns.Msg, error) {
	udp := &dns.Client{Net: "udp", Timeout: c.opts.Timeout, UDPSize: ednsBufferSize}
	resp, _, err := udp.ExchangeContext(ctx, m, server)
	if err != nil {
		return nil, fmt.Errorf("querying %s over UDP: %w", server, err)
	}
	if !resp.Truncated {
		return resp, nil
	}
	tcp := &dns.Client{Net: "tcp", Timeout: c.opts.Timeout}
	resp, _, err = tcp.ExchangeContext(ctx, m, server)
	if err != nil {
		return nil, fmt.Errorf("querying %s over TCP (the UDP answer was truncated): %w", server, err)
	}
	return resp, nil
}

// canonical checks name and returns it lower-case and fully qualified.
func canonical(name string) (string, error) {
	fqdn := dns.Fqdn(strings.ToLower(strings.TrimSpace(name)))
	if _, ok := dns.IsDomainName(fqdn); !ok || fqdn == "." {
		return "", fmt.Errorf("%q is not a domain name", name)
	}
	return fqdn, nil
}

func cnameOf(rrs []dns.RR, owner string) (string, bool) {
	for _, rr := range rrs {
		if cn, ok := rr.(*dns.CNAME); ok && strings.EqualFold(cn.Hdr.Name, owner) {
			return strings.ToLower(dns.Fqdn(cn.Target)), true
		}
	}
	return "", false
}

func txtValues(rrs []dns.RR, owner string) []string {
	var values []string
	for _, rr := range rrs {
		if txt, ok := rr.(*dns.TXT); ok && strings.EqualFold(txt.Hdr.Name, owner) {
			values = append(values, strings.Join(txt.Txt, ""))
		}
	}
	return values
}

// hasReferral reports whether the authority section delegates elsewhere.
func hasReferral(m *dns.Msg) bool {
	for _, rr := range m.Ns {
		if _, ok := rr.(*dns.NS); ok {
			return true
		}
	}
	return false
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

func trimDot(name string) string { return strings.TrimSuffix(name, ".") }

func trimDots(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = trimDot(n)
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}
