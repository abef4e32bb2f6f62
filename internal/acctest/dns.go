package acctest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// DNS zones served by the test DNS servers. Tests put unique names inside
// them; AliasZone is the target zone for CNAME chains that leave a zone.
const (
	DNSZone   = "dv.test"
	AliasZone = "alias.test"
)

var (
	dnsOnce sync.Once
	dnsLab  *harness.DNS
	dnsErr  error
)

// DNS returns the test binary's Knot DNS servers: two independent primaries
// of DNSZone and AliasZone on 127.0.0.1, updated through RFC 2136. They start
// on first use and stop when the binary's tests are done. Updating one server
// only (DNS(t).Server(i)) makes the other lag behind.
func DNS(t *testing.T) *harness.DNS {
	t.Helper()
	dnsOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		dnsLab, dnsErr = harness.StartDNS(ctx, harness.DNSOptions{
			Zones:   []string{DNSZone, AliasZone},
			Servers: 2,
			Dir:     filepath.Join(WorkDir(t), "dns"),
		})
		if dnsErr == nil {
			AtExit(func() { _ = dnsLab.Stop() })
		}
	})
	if dnsErr != nil {
		t.Fatalf("acctest: cannot start the Knot DNS servers: %v", dnsErr)
	}
	return dnsLab
}

// NameserversHCL is DNS(t).Addrs() as an HCL list.
func NameserversHCL(t *testing.T) string {
	t.Helper()
	s := "["
	for i, a := range DNS(t).Addrs() {
		if i > 0 {
			s += ", "
		}
		s += `"` + a + `"`
	}
	return s + "]"
}
