package dnscheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

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
