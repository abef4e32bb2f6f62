package dnscheck_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/dnscheck"
)

// fakeServer is an in-process DNS server on 127.0.0.x (UDP and TCP on one
// port) that answers from a record map the way an authoritative server (or,
// with recursive set, a resolver) does. hook sees every query first and may
// answer it itself.
type fakeServer struct {
	addr string

	mu      sync.Mutex
	records map[string][]dns.RR
	// noChase answers a CNAME without the records at its target, so a
	// client must ask again for each hop.
	noChase   bool
	recursive bool
	hook      func(w dns.ResponseWriter, r *dns.Msg, n int) bool
	queries   []string // "udp TXT a.example.test."
}

func newFakeServer(t *testing.T, ip string, port int, zone string, rrs ...string) *fakeServer {
	t.Helper()
	s := &fakeServer{records: map[string][]dns.RR{}}
	s.add(t, soa(zone))
	s.add(t, rrs...)
	udp, tcp := listenPair(t, ip, port)
	s.addr = udp.LocalAddr().String()
	for _, srv := range []*dns.Server{{PacketConn: udp, Handler: s}, {Listener: tcp, Handler: s}} {
		started := make(chan struct{})
		srv.NotifyStartedFunc = func() { close(started) }
		go func() { _ = srv.ActivateAndServe() }()
		<-started
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	return s
}

// listenPair binds UDP and TCP on the same port of ip (port 0: any free one).
func listenPair(t *testing.T, ip string, port int) (net.PacketConn, net.Listener) {
	t.Helper()
	for range 20 {
		udp, err := net.ListenPacket("udp", net.JoinHostPort(ip, fmt.Sprint(port)))
		if err != nil {
			t.Fatalf("listen udp on %s:%d: %v", ip, port, err)
		}
		tcp, err := net.Listen("tcp", udp.LocalAddr().String())
		if err == nil {
			return udp, tcp
		}
		udp.Close()
		if port != 0 {
			t.Fatalf("listen tcp on %s:%d: %v", ip, port, err)
		}
	}
	t.Fatal("no port free for both UDP and TCP")
	return nil, nil
}

func soa(zone string) string {
	return zone + " 60 IN SOA ns1." + zone + " hostmaster." + zone + " 1 3600 600 86400 60"
}

func (s *fakeServer) add(t *testing.T, rrs ...string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, text := range rrs {
		rr, err := dns.NewRR(text)
		if err != nil {
			t.Fatalf("record %q: %v", text, err)
		}
		name := strings.ToLower(rr.Header().Name)
		s.records[name] = append(s.records[name], rr)
	}
}

// set changes the server's behaviour while it serves.
func (s *fakeServer) set(f func(s *fakeServer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *fakeServer) queryLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

func (s *fakeServer) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	q := r.Question[0]
	s.mu.Lock()
	s.queries = append(s.queries, fmt.Sprintf("%s %s %s", w.LocalAddr().Network(), dns.TypeToString[q.Qtype], q.Name))
	n := len(s.queries)
	hook := s.hook
	s.mu.Unlock()
	if hook != nil && hook(w, r, n) {
		return
	}
	_ = w.WriteMsg(s.answer(r))
}

func (s *fakeServer) answer(r *dns.Msg) *dns.Msg {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := r.Question[0]
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = !s.recursive
	m.RecursionAvailable = s.recursive
	name := strings.ToLower(q.Name)
	seen := map[string]bool{}
	for !seen[name] {
		seen[name] = true
		if len(seen) > 1 && s.zoneOf(name) == nil {
			return m // the chain left the zones this server holds
		}
		rrs, exists := s.records[name]
		var cname *dns.CNAME
		for _, rr := range rrs {
			if rr.Header().Rrtype == q.Qtype {
				m.Answer = append(m.Answer, rr)
			}
			if c, ok := rr.(*dns.CNAME); ok {
				cname = c
			}
		}
		if len(m.Answer) > 0 && m.Answer[len(m.Answer)-1].Header().Rrtype == q.Qtype {
			return m
		}
		if cname != nil && q.Qtype != dns.TypeCNAME {
			m.Answer = append(m.Answer, cname)
			if s.noChase {
				return m
			}
			name = strings.ToLower(cname.Target)
			continue
		}
		if !exists && !s.hasBelow(name) {
			m.Rcode = dns.RcodeNameError
		}
		if z := s.zoneOf(name); z != nil {
			m.Ns = append(m.Ns, z)
		}
		return m
	}
	return m
}

// hasBelow reports whether a name below name exists (an empty non-terminal
// exists: NODATA, not NXDOMAIN).
func (s *fakeServer) hasBelow(name string) bool {
	for n := range s.records {
		if n != name && dns.IsSubDomain(name, n) {
			return true
		}
	}
	return false
}

func (s *fakeServer) zoneOf(name string) dns.RR {
	var best dns.RR
	for n, rrs := range s.records {
		for _, rr := range rrs {
			if _, ok := rr.(*dns.SOA); ok && dns.IsSubDomain(n, name) &&
				(best == nil || dns.CountLabel(n) > dns.CountLabel(best.Header().Name)) {
				best = rr
			}
		}
	}
	return best
}

func checker(servers ...*fakeServer) *dnscheck.Checker {
	var addrs []string
	for _, s := range servers {
		addrs = append(addrs, s.addr)
	}
	return dnscheck.New(dnscheck.Options{Nameservers: addrs, Timeout: 500 * time.Millisecond, Backoff: 10 * time.Millisecond})
}

func lookup(t *testing.T, c *dnscheck.Checker, name string) *dnscheck.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.LookupTXT(ctx, name)
	if err != nil {
		t.Fatalf("LookupTXT(%s): %v", name, err)
	}
	return res
}

func one(t *testing.T, res *dnscheck.Result) dnscheck.ServerResult {
	t.Helper()
	if len(res.Servers) != 1 {
		t.Fatalf("want one server result, got %d", len(res.Servers))
	}
	return res.Servers[0]
}

func TestTruncatedUDPAnswerIsAskedAgainOverTCP(t *testing.T) {
	s := newFakeServer(t, "127.0.0.1", 0, "example.test.", `big.example.test. 60 IN TXT "token-value"`)
	s.set(func(s *fakeServer) {
		s.hook = func(w dns.ResponseWriter, r *dns.Msg, _ int) bool {
			if w.LocalAddr().Network() != "udp" {
				return false
			}
			m := new(dns.Msg)
			m.SetReply(r)
			m.Authoritative, m.Truncated = true, true
			_ = w.WriteMsg(m)
			return true
		}
	})
	r := one(t, lookup(t, checker(s), "big.example.test"))
	if !r.Has("token-value") {
		t.Fatalf("want the TXT value from the TCP answer, got %s", r.Answer())
	}
	if got := s.queryLog(); len(got) != 2 || got[0] != "udp TXT big.example.test." || got[1] != "tcp TXT big.example.test." {
		t.Fatalf("want one UDP then one TCP query, got %q", got)
	}
}

func TestNXDOMAINAndNODATAAreToldApart(t *testing.T) {
	s := newFakeServer(t, "127.0.0.1", 0, "example.test.",
		"host.example.test. 60 IN A 192.0.2.1",
		`deep.below.example.test. 60 IN TXT "x"`)
	c := checker(s)
	for name, want := range map[string]dnscheck.Status{
		"missing.example.test": dnscheck.StatusNXDomain,
		"host.example.test":    dnscheck.StatusNoData,
		"below.example.test":   dnscheck.StatusNoData, // an empty non-terminal exists
	} {
		r := one(t, lookup(t, c, name))
		if r.Status != want {
			t.Errorf("%s: status %s (%s), want %s", name, r.Status, r.Answer(), want)
		}
		if r.Has("x") {
			t.Errorf("%s: Has reports a value the server does not serve", name)
		}
	}
	if got := one(t, lookup(t, c, "missing.example.test")).Answer(); !strings.Contains(got, "NXDOMAIN") {
		t.Errorf("answer %q does not say NXDOMAIN", got)
	}
	if got := one(t, lookup(t, c, "host.example.test")).Answer(); !strings.Contains(got, "NODATA") {
		t.Errorf("answer %q does not say NODATA", got)
	}
}

func TestSERVFAILIsRetriedWithBackoff(t *testing.T) {
	s := newFakeServer(t, "127.0.0.1", 0, "example.test.", `flaky.example.test. 60 IN TXT "ok"`)
	var failFirst atomic.Int32
	s.set(func(s *fakeServer) {
		s.hook = func(w dns.ResponseWriter, r *dns.Msg, n int) bool {
			if int32(n) > failFirst.Load() {
				return false
			}
			m := new(dns.Msg)
			m.SetRcode(r, dns.RcodeServerFailure)
			_ = w.WriteMsg(m)
			return true
		}
	})

	failFirst.Store(2)
	start := time.Now()
	r := one(t, lookup(t, dnscheck.New(dnscheck.Options{Nameservers: []string{s.addr}, Attempts: 3, Backoff: 50 * time.Millisecond}), "flaky.example.test"))
	if !r.Has("ok") {
		t.Fatalf("want success on the third attempt, got %s", r.Answer())
	}
	// Pauses of 50ms then 100ms.
	if elapsed := time.Since(start); elapsed < 150*time.Millisecond {
		t.Errorf("three attempts took %v: want backoff of at least 150ms", elapsed)
	}

	failFirst.Store(100)
	r = one(t, lookup(t, dnscheck.New(dnscheck.Options{Nameservers: []string{s.addr}, Attempts: 2, Backoff: time.Millisecond}), "flaky.example.test"))
	if r.Status != dnscheck.StatusError || !strings.Contains(r.Answer(), "SERVFAIL") || !strings.Contains(r.Answer(), "after 2 attempts") {
		t.Fatalf("want a SERVFAIL error after 2 attempts, got %s", r.Answer())
	}
}

func TestTimeoutIsRetried(t *testing.T) {
	s := newFakeServer(t, "127.0.0.1", 0, "example.test.", `slow.example.test. 60 IN TXT "late"`)
	s.set(func(s *fakeServer) { s.hook = func(_ dns.ResponseWriter, _ *dns.Msg, n int) bool { return n == 1 } }) // drop the first query
	c := dnscheck.New(dnscheck.Options{Nameservers: []string{s.addr}, Timeout: 200 * time.Millisecond, Backoff: time.Millisecond})
	if r := one(t, lookup(t, c, "slow.example.test")); !r.Has("late") {
		t.Fatalf("want the answer of the second attempt, got %s", r.Answer())
	}
}

func TestMultiStringTXTRecordsAreJoined(t *testing.T) {
	long := strings.Repeat("b", 255)
	s := newFakeServer(t, "127.0.0.1", 0, "example.test.",
		`multi.example.test. 60 IN TXT "abc" "def" "`+long+`"`,
		`multi.example.test. 60 IN TXT "second"`)
	r := one(t, lookup(t, checker(s), "multi.example.test"))
	if !r.Has("abcdef"+long) || !r.Has("second") || len(r.Values) != 2 {
		t.Fatalf("want two values, the first joined from three strings; got %q", r.Values)
	}
	if r.Has("abc") {
		t.Error("a single string of a multi-string record must not count as a value")
	}
}

func TestCNAMEChainIsFollowed(t *testing.T) {
	for _, noChase := range []bool{false, true} {
		t.Run(fmt.Sprintf("noChase=%v", noChase), func(t *testing.T) {
			s := newFakeServer(t, "127.0.0.1", 0, "example.test.",
				"www.example.test. 60 IN CNAME hop1.example.test.",
				"hop1.example.test. 60 IN CNAME hop2.example.test.",
				`hop2.example.test. 60 IN TXT "at-the-end"`,
				"dangling.example.test. 60 IN CNAME nowhere.example.test.")
			s.set(func(s *fakeServer) { s.noChase = noChase })
			r := one(t, lookup(t, checker(s), "www.example.test"))
			if !r.Has("at-the-end") {
				t.Fatalf("want the TXT at the end of the chain, got %s", r.Answer())
			}
			if got := strings.Join(r.CNAMEs, ","); got != "hop1.example.test.,hop2.example.test." {
				t.Errorf("chain %q", got)
			}
			if !strings.Contains(r.Answer(), "CNAME hop1.example.test -> hop2.example.test") {
				t.Errorf("answer %q does not show the chain", r.Answer())
			}
			d := one(t, lookup(t, checker(s), "dangling.example.test"))
			if d.Status != dnscheck.StatusNXDomain {
				t.Errorf("CNAME to a missing name: status %s, want nxdomain (RFC 6604)", d.Status)
			}
		})
	}
}

func TestCNAMELoopAndLongChainsAreBounded(t *testing.T) {
	s := newFakeServer(t, "127.0.0.1", 0, "example.test.",
		"a.example.test. 60 IN CNAME b.example.test.",
		"b.example.test. 60 IN CNAME a.example.test.")
	for i := range 12 {
		s.add(t, fmt.Sprintf("c%d.example.test. 60 IN CNAME c%d.example.test.", i, i+1))
	}
	s.add(t, `c12.example.test. 60 IN TXT "far"`)
	s.set(func(s *fakeServer) { s.noChase = true }) // one hop per query: the bound must hold across queries

	r := one(t, lookup(t, checker(s), "a.example.test"))
	if r.Status != dnscheck.StatusError || !strings.Contains(r.Answer(), "CNAME loop") {
		t.Fatalf("want a CNAME loop error, got %s", r.Answer())
	}
	if n := len(s.queryLog()); n > 3 {
		t.Errorf("a two-name loop took %d queries", n)
	}
	r = one(t, lookup(t, checker(s), "c0.example.test"))
	if r.Status != dnscheck.StatusError || !strings.Contains(r.Answer(), "longer than 8") {
		t.Fatalf("want the chain bound of 8, got %s", r.Answer())
	}
	long := dnscheck.New(dnscheck.Options{Nameservers: []string{s.addr}, MaxCNAMEs: 12})
	if r := one(t, lookup(t, long, "c0.example.test")); !r.Has("far") {
		t.Fatalf("with MaxCNAMEs 12 the chain ends in the TXT record, got %s", r.Answer())
	}
}

func TestEachServerIsAskedAndReported(t *testing.T) {
	current := newFakeServer(t, "127.0.0.1", 0, "example.test.", `app.example.test. 60 IN TXT "tok"`)
	lagging := newFakeServer(t, "127.0.0.1", 0, "example.test.")
	res := lookup(t, checker(current, lagging), "app.example.test")
	if res.AllHave("tok") {
		t.Fatal("AllHave is true while one server lacks the record")
	}
	if !res.Servers[0].Has("tok") || res.Servers[1].Status != dnscheck.StatusNXDomain {
		t.Fatalf("per-server results: %s", res.Describe(""))
	}
	desc := res.Describe("  - ")
	for _, want := range []string{current.addr + `: TXT "tok"`, lagging.addr + ": NXDOMAIN"} {
		if !strings.Contains(desc, want) {
			t.Errorf("description lacks %q:\n%s", want, desc)
		}
	}
	lagging.add(t, `app.example.test. 60 IN TXT "tok"`)
	if res := lookup(t, checker(current, lagging), "app.example.test"); !res.AllHave("tok") {
		t.Fatalf("both servers serve the record now:\n%s", res.Describe(""))
	}
}

func TestReferralIsNotAnAnswer(t *testing.T) {
	s := newFakeServer(t, "127.0.0.1", 0, "example.test.")
	s.set(func(s *fakeServer) {
		s.hook = func(w dns.ResponseWriter, r *dns.Msg, _ int) bool {
			m := new(dns.Msg)
			m.SetReply(r)
			ns, _ := dns.NewRR("sub.example.test. 60 IN NS ns.elsewhere.test.")
			m.Ns = []dns.RR{ns}
			_ = w.WriteMsg(m)
			return true
		}
	})
	r := one(t, lookup(t, checker(s), "x.sub.example.test"))
	if r.Status != dnscheck.StatusError || !strings.Contains(r.Answer(), "not authoritative") {
		t.Fatalf("want a not-authoritative error, got %s", r.Answer())
	}
}

func TestUnreachableServerIsAnErrorResult(t *testing.T) {
	udp, tcp := listenPair(t, "127.0.0.1", 0)
	addr := udp.LocalAddr().String()
	udp.Close()
	tcp.Close()
	c := dnscheck.New(dnscheck.Options{Nameservers: []string{addr}, Timeout: 100 * time.Millisecond, Attempts: 2, Backoff: time.Millisecond})
	r := one(t, lookup(t, c, "x.example.test"))
	if r.Status != dnscheck.StatusError || r.Err == nil {
		t.Fatalf("want an error result, got %s", r.Answer())
	}
}

// TestDiscoveryFindsEveryAuthoritativeServer plays a recursive resolver and
// two authoritative servers (127.0.0.1 and 127.0.0.2 on one port, as NS
// records carry no port).
func TestDiscoveryFindsEveryAuthoritativeServer(t *testing.T) {
	primary := newFakeServer(t, "127.0.0.1", 0, "example.test.", `_v.app.example.test. 60 IN TXT "tok"`,
		"alias.example.test. 60 IN CNAME _v.app.example.test.")
	_, port, _ := net.SplitHostPort(primary.addr)
	portNum, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	secondary := newFakeServer(t, "127.0.0.2", portNum, "example.test.")

	resolver := newFakeServer(t, "127.0.0.1", 0, "example.test.",
		"example.test. 60 IN NS ns1.example.test.",
		"example.test. 60 IN NS ns2.example.test.",
		"ns1.example.test. 60 IN A 127.0.0.1",
		"ns2.example.test. 60 IN A 127.0.0.2",
		`_v.app.example.test. 60 IN TXT "cached"`,
		"alias.example.test. 60 IN CNAME _v.app.example.test.")
	resolver.set(func(s *fakeServer) { s.recursive = true })

	c := dnscheck.New(dnscheck.Options{Resolver: resolver.addr, Port: portNum, Timeout: 500 * time.Millisecond, Backoff: time.Millisecond})
	for _, name := range []string{"_v.app.example.test", "alias.example.test", "missing.deep.example.test"} {
		ctx := context.Background()
		zone, servers, err := c.Discover(ctx, name)
		if err != nil {
			t.Fatalf("Discover(%s): %v", name, err)
		}
		if zone != "example.test." || len(servers) != 2 ||
			servers[0] != (dnscheck.Server{Name: "ns1.example.test.", Addr: primary.addr}) ||
			servers[1] != (dnscheck.Server{Name: "ns2.example.test.", Addr: secondary.addr}) {
			t.Fatalf("Discover(%s) = %s, %v", name, zone, servers)
		}
	}

	res := lookup(t, c, "_v.app.example.test")
	if res.Zone != "example.test" || res.AllHave("tok") || !res.Servers[0].Has("tok") || res.Servers[1].Status != dnscheck.StatusNXDomain {
		t.Fatalf("want the primary's record and the secondary's NXDOMAIN, not the resolver's copy:\n%s", res.Describe(""))
	}
	if !strings.Contains(res.Describe(""), "ns2.example.test ("+secondary.addr+"): NXDOMAIN") {
		t.Errorf("description does not name the server:\n%s", res.Describe(""))
	}
	for _, q := range resolver.queryLog() {
		if strings.Contains(q, " TXT ") {
			t.Errorf("the resolver was asked for the TXT record itself: %s", q)
		}
	}
}

// TestDiscoveryFollowsCNAMEIntoAnotherZone: a CNAME target in another zone
// is asked of that zone's own authoritative servers.
func TestDiscoveryFollowsCNAMEIntoAnotherZone(t *testing.T) {
	first := newFakeServer(t, "127.0.0.1", 0, "example.test.", "alias.example.test. 60 IN CNAME target.other.test.")
	_, port, _ := net.SplitHostPort(first.addr)
	portNum, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	other := newFakeServer(t, "127.0.0.3", portNum, "other.test.", `target.other.test. 60 IN TXT "tok"`)
	resolver := newFakeServer(t, "127.0.0.1", 0, "example.test.",
		"example.test. 60 IN NS ns1.example.test.",
		"ns1.example.test. 60 IN A 127.0.0.1",
		soa("other.test."),
		"other.test. 60 IN NS ns.other.test.",
		"ns.other.test. 60 IN A 127.0.0.3")
	resolver.set(func(s *fakeServer) { s.recursive = true })

	c := dnscheck.New(dnscheck.Options{Resolver: resolver.addr, Port: portNum, Timeout: 500 * time.Millisecond, Backoff: time.Millisecond})
	res := lookup(t, c, "alias.example.test")
	r := one(t, res)
	if res.Zone != "example.test" || r.Server.Addr != first.addr || !r.Has("tok") {
		t.Fatalf("want the target zone's record through the first zone's server:\n%s", res.Describe(""))
	}
	if got := strings.Join(r.CNAMEs, ","); got != "target.other.test." {
		t.Errorf("chain %q", got)
	}
	if len(other.queryLog()) == 0 {
		t.Error("the other zone's server was never asked")
	}
}

func TestDiscoveryFailsWithoutZone(t *testing.T) {
	resolver := newFakeServer(t, "127.0.0.1", 0, "other.test.")
	resolver.set(func(s *fakeServer) { s.recursive = true })
	resolver.set(func(s *fakeServer) {
		s.hook = func(w dns.ResponseWriter, r *dns.Msg, _ int) bool {
			m := new(dns.Msg)
			m.SetRcode(r, dns.RcodeRefused)
			_ = w.WriteMsg(m)
			return true
		}
	})
	c := dnscheck.New(dnscheck.Options{Resolver: resolver.addr, Timeout: 200 * time.Millisecond, Backoff: time.Millisecond})
	if _, err := c.LookupTXT(context.Background(), "app.example.test"); err == nil || !strings.Contains(err.Error(), "no zone") {
		t.Fatalf("want a discovery error, got %v", err)
	}
}

func TestWithDefaultPort(t *testing.T) {
	for in, want := range map[string]string{
		"ns1.example.com":    "ns1.example.com:53",
		"ns1.example.com:54": "ns1.example.com:54",
		"192.0.2.1":          "192.0.2.1:53",
		"2001:db8::1":        "[2001:db8::1]:53",
		"[2001:db8::1]":      "[2001:db8::1]:53",
		"[2001:db8::1]:5353": "[2001:db8::1]:5353",
	} {
		if got := dnscheck.WithDefaultPort(in); got != want {
			t.Errorf("WithDefaultPort(%q) = %q, want %q", in, got, want)
		}
	}
}
