package harness

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/dnscheck"
)

func startDNS(t *testing.T, opts DNSOptions) *DNS {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := StartDNS(ctx, opts)
	if err != nil {
		t.Fatalf("cannot start Knot DNS: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Stop(); err != nil {
			t.Errorf("stopping Knot DNS: %v", err)
		}
	})
	return d
}

func lookupTXT(t *testing.T, addrs []string, name string) *dnscheck.Result {
	t.Helper()
	res, err := dnscheck.New(dnscheck.Options{Nameservers: addrs, Timeout: time.Second}).LookupTXT(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestAccDNSServesDynamicUpdates starts two independent Knot primaries and
// changes their zones at run time through RFC 2136 updates, on both or on
// one only.
func TestAccDNSServesDynamicUpdates(t *testing.T) {
	d := startDNS(t, DNSOptions{Zones: []string{"dv.test", "alias.test"}, Servers: 2})
	if len(d.Addrs()) != 2 || d.Addrs()[0] == d.Addrs()[1] {
		t.Fatalf("want two servers on distinct ports, got %v", d.Addrs())
	}
	if got := strings.Join(d.Zones(), ","); got != "dv.test,alias.test" {
		t.Fatalf("zones %s", got)
	}
	if res := lookupTXT(t, d.Addrs(), "app.dv.test"); res.Servers[0].Status != dnscheck.StatusNXDomain || res.Servers[1].Status != dnscheck.StatusNXDomain {
		t.Fatalf("empty zone:\n%s", res.Describe(""))
	}

	// On the first server only: the second lags.
	if err := d.Server(0).AddTXT("dv.test", "app.dv.test", "tok"); err != nil {
		t.Fatal(err)
	}
	res := lookupTXT(t, d.Addrs(), "app.dv.test")
	if !res.Servers[0].Has("tok") || res.Servers[1].Has("tok") || res.AllHave("tok") {
		t.Fatalf("after an update of server 0 only:\n%s", res.Describe(""))
	}
	if err := d.Server(1).AddTXT("dv.test", "app.dv.test", "tok"); err != nil {
		t.Fatal(err)
	}
	if res := lookupTXT(t, d.Addrs(), "app.dv.test"); !res.AllHave("tok") {
		t.Fatalf("after updating both:\n%s", res.Describe(""))
	}

	// A value longer than one TXT string (and than a UDP answer of 1232
	// bytes) is split into strings and read back whole over TCP.
	long := strings.Repeat("x", 1400)
	if err := d.AddTXT("dv.test", "long.dv.test", long); err != nil {
		t.Fatal(err)
	}
	if res := lookupTXT(t, d.Addrs(), "long.dv.test"); !res.AllHave(long) {
		t.Fatalf("long value not read back:\n%s", res.Describe(""))
	}
	if err := d.AddTXTStrings("dv.test", "multi.dv.test", "ab", "cd"); err != nil {
		t.Fatal(err)
	}
	if res := lookupTXT(t, d.Addrs(), "multi.dv.test"); !res.AllHave("abcd") {
		t.Fatalf("multi-string record:\n%s", res.Describe(""))
	}

	// A CNAME into the other zone.
	if err := d.AddCNAME("dv.test", "www.dv.test", "target.alias.test"); err != nil {
		t.Fatal(err)
	}
	if err := d.AddTXT("alias.test", "target.alias.test", "via-alias"); err != nil {
		t.Fatal(err)
	}
	if res := lookupTXT(t, d.Addrs(), "www.dv.test"); !res.AllHave("via-alias") {
		t.Fatalf("CNAME into another zone:\n%s", res.Describe(""))
	}

	if err := d.RemoveTXT("dv.test", "app.dv.test"); err != nil {
		t.Fatal(err)
	}
	if err := d.RemoveCNAME("dv.test", "www.dv.test"); err != nil {
		t.Fatal(err)
	}
	res = lookupTXT(t, d.Addrs(), "app.dv.test")
	if res.Servers[0].Status != dnscheck.StatusNXDomain {
		t.Fatalf("after removal:\n%s", res.Describe(""))
	}
	if res := lookupTXT(t, d.Addrs(), "www.dv.test"); res.Servers[0].Status != dnscheck.StatusNXDomain {
		t.Fatalf("after CNAME removal:\n%s", res.Describe(""))
	}

	if err := d.AddTXT("dv.test", "app.other.test", "x"); err == nil {
		t.Error("an update outside the zone must fail")
	}

	dir := d.dir
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Stop left %s behind", dir)
	}
	for _, s := range d.servers {
		if !s.proc.exited() {
			t.Errorf("knotd %s still running after Stop", s.addr)
		}
	}
}
