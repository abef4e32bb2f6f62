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
	"errors"
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

// Discover finds the zone that holds name and the addresses of its
// authoritative servers, asking the recursive resolver. Each NS host gives
// its IPv4 addresses, or its IPv6 ones when it has no IPv4 address.
func (c *Checker) Discover(ctx context.Context, name string) (string, []Server, error) {
	resolver := c.opts.Resolver
	if resolver == "" {
		var err error
		if resolver, err = DefaultResolver(); err != nil {
			return "", nil, fmt.Errorf("finding a recursive resolver: %w", err)
		}
	}
	resolver = WithDefaultPort(resolver)
	fqdn, err := canonical(name)
	if err != nil {
		return "", nil, err
	}
	zone, err := c.findZone(ctx, resolver, fqdn)
	if err != nil {
		return "", nil, err
	}
	resp, err := c.exchange(ctx, resolver, zone, dns.TypeNS, true)
	if err != nil {
		return "", nil, fmt.Errorf("asking resolver %s for the name servers of %s: %w", resolver, trimDot(zone), err)
	}
	var hosts []string
	for _, rr := range resp.Answer {
		if ns, ok := rr.(*dns.NS); ok && strings.EqualFold(ns.Hdr.Name, zone) {
			hosts = append(hosts, strings.ToLower(ns.Ns))
		}
	}
	if len(hosts) == 0 {
		return "", nil, fmt.Errorf("resolver %s returned no NS records for zone %s (%s)", resolver, trimDot(zone), dns.RcodeToString[resp.Rcode])
	}
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	var servers []Server
	var errs []error
	for _, host := range hosts {
		addrs, err := c.addresses(ctx, resolver, host, resp.Extra)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, a := range addrs {
			servers = append(servers, Server{Name: host, Addr: net.JoinHostPort(a, strconv.Itoa(c.opts.Port))})
		}
	}
	if len(servers) == 0 {
		return "", nil, fmt.Errorf("no address for any name server of zone %s: %w", trimDot(zone), errors.Join(errs...))
	}
	return zone, servers, nil
}

// findZone walks from name towards the root until the resolver reports a
// zone apex (an SOA record at the name, or the SOA of a negative answer).
func (c *Checker) findZone(ctx context.Context, resolver, name string) (string, error) {
	for candidate := name; ; {
		resp, err := c.exchange(ctx, resolver, candidate, dns.TypeSOA, true)
		if err != nil {
			return "", fmt.Errorf("asking resolver %s for the zone of %s: %w", resolver, trimDot(name), err)
		}
		_, isAlias := cnameOf(resp.Answer, candidate)
		for _, rr := range resp.Answer {
			if soa, ok := rr.(*dns.SOA); ok && strings.EqualFold(soa.Hdr.Name, candidate) {
				return strings.ToLower(candidate), nil
			}
		}
		// A negative answer carries its zone's SOA, unless a CNAME led the
		// resolver into another zone.
		if !isAlias && (resp.Rcode == dns.RcodeSuccess || resp.Rcode == dns.RcodeNameError) {
			for _, rr := range resp.Ns {
				if soa, ok := rr.(*dns.SOA); ok && dns.IsSubDomain(soa.Hdr.Name, candidate) {
					return strings.ToLower(soa.Hdr.Name), nil
				}
			}
		}
		if candidate == "." {
			return "", fmt.Errorf("resolver %s reported no zone for %s", resolver, trimDot(name))
		}
		off, end := dns.NextLabel(candidate, 0)
		if end {
			candidate = "."
		} else {
			candidate = candidate[off:]
		}
	}
}

// addresses returns host's IPv4 addresses (from glue or the resolver), or its
// IPv6 addresses when it has none.
func (c *Checker) addresses(ctx context.Context, resolver, host string, glue []dns.RR) ([]string, error) {
	for _, qtype := range []uint16{dns.TypeA, dns.TypeAAAA} {
		var addrs []string
		collect := func(rrs []dns.RR) {
			for _, rr := range rrs {
				if !strings.EqualFold(rr.Header().Name, host) {
					continue
				}
				switch v := rr.(type) {
				case *dns.A:
					if qtype == dns.TypeA {
						addrs = append(addrs, v.A.String())
					}
				case *dns.AAAA:
					if qtype == dns.TypeAAAA {
						addrs = append(addrs, v.AAAA.String())
					}
				}
			}
		}
		collect(glue)
		if len(addrs) == 0 {
			resp, err := c.exchange(ctx, resolver, host, qtype, true)
			if err != nil {
				return nil, fmt.Errorf("address of name server %s: %w", trimDot(host), err)
			}
			collect(resp.Answer)
		}
		if len(addrs) > 0 {
			slices.Sort(addrs)
			return slices.Compact(addrs), nil
		}
	}
	return nil, fmt.Errorf("name server %s has no A or AAAA record", trimDot(host))
}

// exchange sends one question, over UDP and again over TCP when the answer
// was truncated. Timeouts, network errors and SERVFAIL are retried with
// backoff, up to Attempts times; other answers are returned as they are.
func (c *Checker) exchange(ctx context.Context, server, name string, qtype uint16, recursive bool) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.RecursionDesired = recursive
	m.SetEdns0(ednsBufferSize, false)

	var lastErr error
	pause := c.opts.Backoff
	for attempt := 1; ; attempt++ {
		resp, err := c.exchangeOnce(ctx, server, m)
		switch {
		case err != nil:
			lastErr = err
		case resp.Rcode == dns.RcodeServerFailure:
			lastErr = fmt.Errorf("%s answered SERVFAIL for %s", server, trimDot(name))
		default:
			return resp, nil
		}
		if attempt >= c.opts.Attempts {
			return nil, fmt.Errorf("%w (after %d attempts)", lastErr, attempt)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (stopped: %w)", lastErr, ctx.Err())
		case <-time.After(pause):
		}
		pause *= 2
	}
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
