package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// DNSOptions configures StartDNS.
type DNSOptions struct {
	// Zones served by every server, e.g. "dv.test". Default: "zerotrust.test".
	Zones []string
	// Servers is the number of knotd instances. Each is an independent
	// primary of every zone, so a test can update one and not the other (a
	// lagging authoritative server). Default 1.
	Servers int
	// Dir holds each server's configuration, zone files, databases and log
	// under Dir/knot-<i>/. Empty: a temporary directory, removed by Stop.
	Dir string
}

// DNS is a set of running Knot DNS servers, authoritative for the same
// zones, that accept RFC 2136 dynamic updates from 127.0.0.0/8.
type DNS struct {
	servers   []*DNSServer
	zones     []string
	dir       string
	removeDir bool
	stopOnce  sync.Once
	stopErr   error
}

// DNSServer is one knotd instance.
type DNSServer struct {
	addr  string
	dir   string
	zones []string
	proc  *proc
}

// dnsUpdateTimeout bounds one dynamic update exchange.
const dnsUpdateTimeout = 5 * time.Second

// KnotBinary finds knotd (Debian package `knot`; scripts/apt.sh installs it).
func KnotBinary() (string, error) {
	if p, err := exec.LookPath("knotd"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/knotd", "/usr/local/sbin/knotd"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", errors.New("knotd not found: install the Debian package knot (scripts/apt.sh does; `make test` runs it)")
}

// StartDNS starts opts.Servers knotd instances on free 127.0.0.1 ports, each
// serving opts.Zones with an SOA, two NS records and their addresses. It
// returns once every server answers for every zone. On failure it stops what
// it started and returns an error quoting the server's log.
func StartDNS(ctx context.Context, opts DNSOptions) (*DNS, error) {
	bin, err := KnotBinary()
	if err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	zones := opts.Zones
	if len(zones) == 0 {
		zones = []string{"zerotrust.test"}
	}
	d := &DNS{dir: opts.Dir}
	for _, z := range zones {
		fqdn := dns.Fqdn(strings.ToLower(z))
		if _, ok := dns.IsDomainName(fqdn); !ok || fqdn == "." {
			return nil, fmt.Errorf("harness: zone %q is not a domain name", z)
		}
		d.zones = append(d.zones, fqdn)
	}
	n := max(opts.Servers, 1)
	if d.dir == "" {
		if d.dir, err = os.MkdirTemp("", "zt-dns-"); err != nil {
			return nil, fmt.Errorf("harness: %w", err)
		}
		d.removeDir = true
	} else if d.dir, err = filepath.Abs(d.dir); err != nil {
		return nil, fmt.Errorf("harness: %w", err)
	}
	for i := range n {
		s, err := startKnot(ctx, bin, filepath.Join(d.dir, fmt.Sprintf("knot-%d", i)), d.zones)
		if err != nil {
			_ = d.Stop()
			return nil, fmt.Errorf("harness: DNS server %d: %w", i, err)
		}
		d.servers = append(d.servers, s)
	}
	return d, nil
}

func startKnot(ctx context.Context, bin, dir string, zones []string) (*DNSServer, error) {
	var lastErr error
	for attempt := 1; attempt <= 5; attempt++ {
		port, err := freeDNSPort()
		if err != nil {
			return nil, err
		}
		s := &DNSServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, zones: zones}
		if err := s.writeConfig(port); err != nil {
			return nil, err
		}
		s.proc, err = startProc("knotd", bin, []string{"-c", filepath.Join(dir, "knot.conf")}, filepath.Join(dir, "knotd.log"), false)
		if err != nil {
			return nil, err
		}
		lastErr = s.waitReady(ctx)
		if lastErr == nil {
			return s, nil
		}
		_ = s.proc.stop(time.Second)
		// Another process may have taken the port between probe and bind.
		if !strings.Contains(strings.ToLower(fileTail(s.proc.logPath, 25)), "address already in use") || ctx.Err() != nil {
			return nil, lastErr
		}
	}
	return nil, lastErr
}

// freeDNSPort returns a port free for both UDP and TCP on 127.0.0.1.
func freeDNSPort() (int, error) {
	for range 20 {
		udp, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("finding a free port: %w", err)
		}
		addr, ok := udp.LocalAddr().(*net.UDPAddr)
		if !ok {
			udp.Close()
			return 0, fmt.Errorf("finding a free port: unexpected address %v", udp.LocalAddr())
		}
		tcp, err := net.Listen("tcp", addr.String())
		udp.Close()
		if err == nil {
			tcp.Close()
			return addr.Port, nil
		}
	}
	return 0, errors.New("finding a free port: no port free for both UDP and TCP")
}

// writeConfig writes knot.conf and one zone file per zone. Updates live in
// memory only (no journal, no zone file flush): every start is a clean zone.
func (s *DNSServer) writeConfig(port int) error {
	for _, sub := range []string{"run", "storage", "zones"} {
		if err := os.MkdirAll(filepath.Join(s.dir, sub), 0o755); err != nil {
			return err
		}
	}
	var conf strings.Builder
	fmt.Fprintf(&conf, `server:
    rundir: %q
    listen: 127.0.0.1@%d
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
log:
  - target: stderr
    any: info
database:
    storage: %q
acl:
  - id: loopback_update
    address: 127.0.0.0/8
    action: update
template:
  - id: default
    storage: %q
    file: "%%s.zone"
    zonefile-sync: -1
    zonefile-load: whole
    journal-content: none
    acl: loopback_update
zone:
`, filepath.Join(s.dir, "run"), port, filepath.Join(s.dir, "storage"), filepath.Join(s.dir, "zones"))
	for _, z := range s.zones {
		fmt.Fprintf(&conf, "  - domain: %s\n", z)
		zone := fmt.Sprintf(`$ORIGIN %s
$TTL 30
@    SOA ns1 hostmaster 1 3600 600 86400 30
@    NS  ns1
@    NS  ns2
ns1  A   127.0.0.1
ns2  A   127.0.0.1
`, z)
		if err := os.WriteFile(filepath.Join(s.dir, "zones", strings.TrimSuffix(z, ".")+".zone"), []byte(zone), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(s.dir, "knot.conf"), []byte(conf.String()), 0o644)
}

// waitReady polls until the server answers authoritatively for every zone.
func (s *DNSServer) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	c := &dns.Client{Net: "udp", Timeout: 500 * time.Millisecond}
	pending := append([]string(nil), s.zones...)
	for len(pending) > 0 {
		if s.proc.exited() {
			return s.proc.exitError()
		}
		m := new(dns.Msg)
		m.SetQuestion(pending[0], dns.TypeSOA)
		m.RecursionDesired = false
		if resp, _, err := c.ExchangeContext(ctx, m, s.addr); err == nil && resp.Authoritative && resp.Rcode == dns.RcodeSuccess {
			pending = pending[1:]
			continue
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("knotd on %s did not serve zone %s in time; last lines of %s:\n%s",
				s.addr, pending[0], s.proc.logPath, fileTail(s.proc.logPath, 25))
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// Addrs are the servers' host:port addresses, in server order.
func (d *DNS) Addrs() []string {
	addrs := make([]string, len(d.servers))
	for i, s := range d.servers {
		addrs[i] = s.addr
	}
	return addrs
}

// Zones are the served zones, without the trailing dot.
func (d *DNS) Zones() []string {
	zones := make([]string, len(d.zones))
	for i, z := range d.zones {
		zones[i] = strings.TrimSuffix(z, ".")
	}
	return zones
}

// Server returns the i-th server, for updates that only it receives.
func (d *DNS) Server(i int) *DNSServer { return d.servers[i] }

// Servers are all servers.
func (d *DNS) Servers() []*DNSServer { return append([]*DNSServer(nil), d.servers...) }

// AddTXT adds one TXT record per value at name on every server. A value
// longer than 255 bytes is split into several strings of one record, as
// DNS requires.
func (d *DNS) AddTXT(zone, name string, values ...string) error {
	return d.each(func(s *DNSServer) error { return s.AddTXT(zone, name, values...) })
}

// AddTXTStrings adds one TXT record made of the given strings at name on
// every server (readers join them).
func (d *DNS) AddTXTStrings(zone, name string, parts ...string) error {
	return d.each(func(s *DNSServer) error { return s.AddTXTStrings(zone, name, parts...) })
}

// AddCNAME makes name an alias of target on every server.
func (d *DNS) AddCNAME(zone, name, target string) error {
	return d.each(func(s *DNSServer) error { return s.AddCNAME(zone, name, target) })
}

// RemoveTXT removes TXT records at name on every server: the given values,
// or all of them when none is given.
func (d *DNS) RemoveTXT(zone, name string, values ...string) error {
	return d.each(func(s *DNSServer) error { return s.RemoveTXT(zone, name, values...) })
}

// RemoveCNAME removes the CNAME at name on every server.
func (d *DNS) RemoveCNAME(zone, name string) error {
	return d.each(func(s *DNSServer) error { return s.RemoveCNAME(zone, name) })
}

func (d *DNS) each(f func(*DNSServer) error) error {
	var errs []error
	for _, s := range d.servers {
		errs = append(errs, f(s))
	}
	return errors.Join(errs...)
}

// Stop stops every server and removes the temporary directory, if any.
func (d *DNS) Stop() error {
	d.stopOnce.Do(func() {
		var errs []error
		for _, s := range d.servers {
			if s.proc != nil {
				errs = append(errs, s.proc.stop(2*time.Second))
			}
		}
		if d.removeDir {
			errs = append(errs, os.RemoveAll(d.dir))
		}
		d.stopErr = errors.Join(errs...)
	})
	return d.stopErr
}

// Addr is the server's host:port.
func (s *DNSServer) Addr() string { return s.addr }

// AddTXT adds one TXT record per value at name (see DNS.AddTXT).
func (s *DNSServer) AddTXT(zone, name string, values ...string) error {
	rrs := make([]dns.RR, 0, len(values))
	for _, v := range values {
		var parts []string
		for len(v) > 255 {
			parts, v = append(parts, v[:255]), v[255:]
		}
		rrs = append(rrs, &dns.TXT{Txt: append(parts, v)})
	}
	return s.update(zone, name, func(m *dns.Msg, hdr dns.RR_Header) {
		m.Insert(withHeader(rrs, hdr, dns.TypeTXT))
	})
}

// AddTXTStrings adds one TXT record made of the given strings at name.
func (s *DNSServer) AddTXTStrings(zone, name string, parts ...string) error {
	return s.update(zone, name, func(m *dns.Msg, hdr dns.RR_Header) {
		m.Insert(withHeader([]dns.RR{&dns.TXT{Txt: parts}}, hdr, dns.TypeTXT))
	})
}

// AddCNAME makes name an alias of target.
func (s *DNSServer) AddCNAME(zone, name, target string) error {
	return s.update(zone, name, func(m *dns.Msg, hdr dns.RR_Header) {
		m.Insert(withHeader([]dns.RR{&dns.CNAME{Target: dns.Fqdn(target)}}, hdr, dns.TypeCNAME))
	})
}

// RemoveTXT removes the given TXT values at name, or every TXT record there.
func (s *DNSServer) RemoveTXT(zone, name string, values ...string) error {
	return s.update(zone, name, func(m *dns.Msg, hdr dns.RR_Header) {
		if len(values) == 0 {
			hdr.Rrtype = dns.TypeTXT
			m.RemoveRRset([]dns.RR{&dns.ANY{Hdr: hdr}})
			return
		}
		rrs := make([]dns.RR, len(values))
		for i, v := range values {
			rrs[i] = &dns.TXT{Txt: []string{v}}
		}
		m.Remove(withHeader(rrs, hdr, dns.TypeTXT))
	})
}

// RemoveCNAME removes the CNAME at name.
func (s *DNSServer) RemoveCNAME(zone, name string) error {
	return s.update(zone, name, func(m *dns.Msg, hdr dns.RR_Header) {
		hdr.Rrtype = dns.TypeCNAME
		m.RemoveRRset([]dns.RR{&dns.ANY{Hdr: hdr}})
	})
}

func withHeader(rrs []dns.RR, hdr dns.RR_Header, rrtype uint16) []dns.RR {
	hdr.Rrtype = rrtype
	for _, rr := range rrs {
		*rr.Header() = hdr
	}
	return rrs
}

// update sends one RFC 2136 update for name (a full name inside zone) over
// TCP and checks that the server applied it.
func (s *DNSServer) update(zone, name string, build func(m *dns.Msg, hdr dns.RR_Header)) error {
	z, n := dns.Fqdn(strings.ToLower(zone)), dns.Fqdn(strings.ToLower(name))
	if !dns.IsSubDomain(z, n) {
		return fmt.Errorf("harness: DNS update: %s is not inside zone %s", n, z)
	}
	m := new(dns.Msg)
	m.SetUpdate(z)
	build(m, dns.RR_Header{Name: n, Class: dns.ClassINET, Ttl: 30})
	c := &dns.Client{Net: "tcp", Timeout: dnsUpdateTimeout}
	ctx, cancel := context.WithTimeout(context.Background(), dnsUpdateTimeout)
	defer cancel()
	resp, _, err := c.ExchangeContext(ctx, m, s.addr)
	if err != nil {
		return fmt.Errorf("harness: DNS update of %s on %s: %w", n, s.addr, err)
	}
	if resp.Rcode != dns.RcodeSuccess {
		return fmt.Errorf("harness: DNS update of %s on %s: %s", n, s.addr, dns.RcodeToString[resp.Rcode])
	}
	return nil
}
