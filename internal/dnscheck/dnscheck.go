// Package dnscheck asks a domain's authoritative DNS servers, one by one and
// directly, which TXT values they serve for a name. It never goes through a
// caching resolver for the answer itself: a cache can hide a record that was
// just published (a stale negative answer) or show one that was just removed,
// and domain ownership checks must see what every authoritative server says.
//
// A recursive resolver is used only to find the zone and its name servers
// (the NS records and their addresses), unless the servers are given.
package dnscheck

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Defaults of Options.
const (
	DefaultTimeout   = 5 * time.Second
	DefaultAttempts  = 3
	DefaultBackoff   = 250 * time.Millisecond
	DefaultMaxCNAMEs = 8
	DefaultPort      = 53
	resolvConf       = "/etc/resolv.conf"
	ednsBufferSize   = 1232 // the DNS flag day 2020 value: no IP fragmentation
)

// Options configures a Checker. The zero value asks the first name server of
// /etc/resolv.conf to find the authoritative servers.
type Options struct {
	// Resolver is the recursive resolver (host:port) used to find the zone and
	// its name servers. Empty: the first nameserver of /etc/resolv.conf.
	Resolver string
	// Nameservers (host:port, or host for port 53) are asked instead of the
	// zone's discovered authoritative servers; CNAME targets are asked of the
	// same servers.
	Nameservers []string
	// Timeout bounds one query (one UDP or TCP exchange). Default 5s.
	Timeout time.Duration
	// Attempts is how often a query is sent before a timeout or SERVFAIL is
	// final. Default 3.
	Attempts int
	// Backoff is the pause before the second attempt; it doubles after each.
	// Default 250ms.
	Backoff time.Duration
	// MaxCNAMEs bounds the CNAME chain followed from the name. Default 8.
	MaxCNAMEs int
	// Port is the port of discovered authoritative servers. Default 53.
	Port int
}

// Checker queries authoritative servers. It is safe for concurrent use.
type Checker struct {
	opts Options
}

// New returns a Checker with the defaults filled in.
func New(opts Options) *Checker {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultAttempts
	}
	if opts.Backoff <= 0 {
		opts.Backoff = DefaultBackoff
	}
	if opts.MaxCNAMEs <= 0 {
		opts.MaxCNAMEs = DefaultMaxCNAMEs
	}
	if opts.Port <= 0 {
		opts.Port = DefaultPort
	}
	opts.Nameservers = slices.Clone(opts.Nameservers)
	for i, ns := range opts.Nameservers {
		opts.Nameservers[i] = WithDefaultPort(ns)
	}
	return &Checker{opts: opts}
}

// WithDefaultPort adds ":53" to a server address that has no port.
func WithDefaultPort(server string) string {
	if _, _, err := net.SplitHostPort(server); err == nil {
		return server
	}
	return net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(server, "["), "]"), strconv.Itoa(DefaultPort))
}

// DefaultResolver is the first nameserver of /etc/resolv.conf, as host:port.
func DefaultResolver() (string, error) {
	cfg, err := dns.ClientConfigFromFile(resolvConf)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", resolvConf, err)
	}
	if len(cfg.Servers) == 0 {
		return "", fmt.Errorf("%s lists no nameserver", resolvConf)
	}
	return net.JoinHostPort(cfg.Servers[0], cfg.Port), nil
}

// Server is one authoritative server.
type Server struct {
	// Addr is the address queried, host:port.
	Addr string
	// Name is the server's NS host name; empty when the server was given.
	Name string
}

// String reads "ns1.example.com (192.0.2.1:53)" or "192.0.2.1:53".
func (s Server) String() string {
	if s.Name == "" {
		return s.Addr
	}
	return fmt.Sprintf("%s (%s)", strings.TrimSuffix(s.Name, "."), s.Addr)
}

// Status is how a server answered.
type Status string

// The possible answers. NXDOMAIN (the name does not exist) and NODATA (the
// name exists but has no TXT record) are told apart: the first usually means
// a typo in the record name, the second a record of the wrong type or one not
// yet published.
const (
	StatusAnswer   Status = "answer"
	StatusNXDomain Status = "nxdomain"
	StatusNoData   Status = "nodata"
	StatusError    Status = "error"
)

// ServerResult is what one server answered for the name.
type ServerResult struct {
	Server Server
	Status Status
	// Values are the TXT records at the end of the CNAME chain; the strings
	// of one record are joined without separator, as verifiers read them.
	Values []string
	// CNAMEs is the chain followed from the name, each target in order.
	CNAMEs []string
	// Err is set when Status is StatusError.
	Err error
}

// Has reports whether the server serves value as one of the TXT records.
func (r ServerResult) Has(value string) bool {
	return r.Status == StatusAnswer && slices.Contains(r.Values, value)
}

// Answer describes the answer in a few words, for messages and the data
// source's `answer` attribute.
func (r ServerResult) Answer() string {
	var s string
	switch r.Status {
	case StatusAnswer:
		quoted := make([]string, len(r.Values))
		for i, v := range r.Values {
			quoted[i] = strconv.Quote(v)
		}
		s = "TXT " + strings.Join(quoted, ", ")
	case StatusNXDomain:
		s = "NXDOMAIN (the name does not exist)"
	case StatusNoData:
		s = "NODATA (the name exists but has no TXT record)"
	default:
		s = "error: " + errString(r.Err)
	}
	if len(r.CNAMEs) > 0 {
		s = "CNAME " + strings.Join(trimDots(r.CNAMEs), " -> ") + ": " + s
	}
	return s
}

// Result is the answer of every server for one name.
type Result struct {
	// Name is the name asked for, without the trailing dot.
	Name string
	// Zone is the discovered zone, without the trailing dot; empty when the
	// servers were given.
	Zone    string
	Servers []ServerResult
}

// AllHave reports whether every server serves value (and there is a server).
func (r *Result) AllHave(value string) bool {
	if r == nil || len(r.Servers) == 0 {
		return false
	}
	for _, s := range r.Servers {
		if !s.Has(value) {
			return false
		}
	}
	return true
}

// Describe lists each server's answer, one per line, each line starting
// with indent.
func (r *Result) Describe(indent string) string {
	var b strings.Builder
	for i, s := range r.Servers {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s%s: %s", indent, s.Server, s.Answer())
	}
	return b.String()
}

// LookupTXT asks every authoritative server of name's zone (or the given
// nameservers) for the TXT records at name, following CNAMEs. An error means
// no server could be found; a server that fails is reported in its result.
func (c *Checker) LookupTXT(ctx context.Context, name string) (*Result, error) {
	fqdn, err := canonical(name)
	if err != nil {
		return nil, err
	}
	res := &Result{Name: strings.TrimSuffix(fqdn, ".")}
	var servers []Server
	if len(c.opts.Nameservers) > 0 {
		for _, ns := range c.opts.Nameservers {
			servers = append(servers, Server{Addr: ns})
		}
	} else {
		zone, found, err := c.Discover(ctx, fqdn)
		if err != nil {
			return nil, err
		}
		res.Zone, servers = strings.TrimSuffix(zone, "."), found
	}
	res.Servers = make([]ServerResult, len(servers))
	done := make(chan struct{}, len(servers))
	for i, s := range servers {
		go func() {
			res.Servers[i] = c.lookupAt(ctx, s, dns.Fqdn(res.Zone), fqdn)
			done <- struct{}{}
		}()
	}
	for range servers {
		<-done
	}
	return res, nil
}

// lookupAt follows name's CNAME chain on one server and returns the TXT
// records at its end. zone is the server's zone when it was discovered ("."
// when the servers were given, which then answer for every name).
func (c *Checker) lookupAt(ctx context.Context, server Server, zone, name string) ServerResult {
	r := ServerResult{Server: server}
	seen := map[string]bool{name: true}
	current := name
	for {
		asked := current
		resp, err := c.exchange(ctx, server.Addr, asked, dns.TypeTXT, false)
		if err != nil {
			r.Status, r.Err = StatusError, err
			return r
		}
		// The answer may hold the chain and the records at its end, in order.
		for {
			target, ok := cnameOf(resp.Answer, current)
			if !ok {
				break
			}
			if seen[target] {
				r.Status, r.Err = StatusError, fmt.Errorf("CNAME loop: %s points back to %s", trimDot(current), trimDot(target))
				return r
			}
			if len(r.CNAMEs) >= c.opts.MaxCNAMEs {
				r.Status, r.Err = StatusError, fmt.Errorf("CNAME chain longer than %d from %s", c.opts.MaxCNAMEs, trimDot(name))
				return r
			}
			seen[target] = true
			r.CNAMEs = append(r.CNAMEs, target)
			current = target
		}
		if values := txtValues(resp.Answer, current); len(values) > 0 {
			r.Status, r.Values = StatusAnswer, values
			return r
		}
		switch {
		case resp.Rcode == dns.RcodeNameError:
			// RFC 6604: NXDOMAIN is about the last name of the chain.
			r.Status = StatusNXDomain
			return r
		case resp.Rcode != dns.RcodeSuccess:
			r.Status, r.Err = StatusError, fmt.Errorf("%s answered %s for %s", server.Addr, dns.RcodeToString[resp.Rcode], trimDot(current))
			return r
		case current != asked:
			// The chain left what this response covers: ask for the target.
			if len(c.opts.Nameservers) == 0 && !dns.IsSubDomain(zone, current) {
				return c.lookupElsewhere(ctx, r, current)
			}
			continue
		case !resp.Authoritative && hasReferral(resp):
			r.Status, r.Err = StatusError, fmt.Errorf("%s is not authoritative for %s (it refers to other servers)", server.Addr, trimDot(current))
			return r
		default:
			r.Status = StatusNoData
			return r
		}
	}
}

// lookupElsewhere continues a CNAME chain that left the zone: the target's
// own zone is discovered and all of its servers are asked. The result counts
// a value only when every one of them serves it, because a verifier may ask
// any of them.
func (c *Checker) lookupElsewhere(ctx context.Context, r ServerResult, target string) ServerResult {
	budget := *c
	budget.opts.MaxCNAMEs = c.opts.MaxCNAMEs - len(r.CNAMEs)
	if budget.opts.MaxCNAMEs <= 0 {
		r.Status, r.Err = StatusError, fmt.Errorf("CNAME chain longer than %d", c.opts.MaxCNAMEs)
		return r
	}
	sub, err := budget.LookupTXT(ctx, target)
	if err != nil {
		r.Status, r.Err = StatusError, fmt.Errorf("CNAME target %s: %w", trimDot(target), err)
		return r
	}
	first := sub.Servers[0]
	r.CNAMEs = append(r.CNAMEs, first.CNAMEs...)
	for _, s := range sub.Servers[1:] {
		if s.Status != first.Status || !slices.Equal(sortedCopy(s.Values), sortedCopy(first.Values)) {
			r.Status, r.Err = StatusError, fmt.Errorf("the servers of zone %s disagree about CNAME target %s:\n%s",
				sub.Zone, trimDot(target), sub.Describe("    "))
			return r
		}
	}
	r.Status, r.Values, r.Err = first.Status, first.Values, first.Err
	return r
}
