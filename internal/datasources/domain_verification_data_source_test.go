package datasources_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	tfjson "github.com/hashicorp/terraform-json"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
)

const dvData = "data.zerotrust_domain_verification.this"

// dvToken waits for the stand-in controller's token on the cluster.
func dvToken(t *testing.T, cluster, apiVersion, name string) string {
	t.Helper()
	tok, err := waitToken(acctest.Dynamic(t, cluster), cluster, apiVersion, name)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// waitToken is dvToken for goroutines other than the test's, which must not
// fail the test themselves: it returns the error instead.
func waitToken(d dynamic.Interface, cluster, apiVersion, name string) (string, error) {
	ri := d.Resource(domainverification.Kind(apiVersion).GVR())
	deadline := time.Now().Add(30 * time.Second)
	for {
		obj, err := ri.Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			if tok := domainverification.StatusOf(obj).Token; tok != "" {
				return tok, nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("%s: DomainVerification %s has no token after 30s (last error %v)", cluster, name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitVerified polls the cluster until the stand-in controller reports the
// v1 object verified.
func waitVerified(t *testing.T, cluster, name string) {
	t.Helper()
	ri := acctest.Dynamic(t, cluster).Resource(domainverification.Kind(domainverification.V1).GVR())
	deadline := time.Now().Add(60 * time.Second)
	for {
		obj, err := ri.Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			if v := domainverification.StatusOf(obj).Verified; v != nil && *v {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: DomainVerification %s not verified after 60s (last error %v)", cluster, name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// dvConfig is a DomainVerification for domain on cluster east, and, unless
// data is empty, the data source reading it with the given extra arguments.
// The data source asks both test Knot servers directly.
func dvConfig(t *testing.T, domain, data string) string {
	t.Helper()
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_domain_verification" "this" {
  domain = %q
}
`, domain)
	if data == "" {
		return config
	}
	return config + fmt.Sprintf(`
data "zerotrust_domain_verification" "this" {
  domain        = zerotrust_domain_verification.this.domain
  nameservers   = %s
  poll_interval = "250ms"
%s
}
`, acctest.NameserversHCL(t), data)
}

func server(i int, attr string) tfjsonpath.Path {
	return tfjsonpath.New("servers").AtSliceIndex(i).AtMapKey(attr)
}

// TestAccDomainVerificationDataSource_waitsForRecord: without the record
// each server's NXDOMAIN is reported; `wait` then times out naming every
// server's answer; a record published while the data source waits ends the
// wait with success, and the controller's verdict is waited for too.
func TestAccDomainVerificationDataSource_waitsForRecord(t *testing.T) {
	acctest.DomainVerificationController(t, acctest.East)
	domain := acctest.UniqueName("wait") + "." + acctest.DNSZone
	addrs := acctest.DNS(t).Addrs()
	var token string
	// The publishing goroutine reports here; a state check reads it on the
	// test's goroutine.
	published := make(chan error, 1)

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: dvConfig(t, domain, ""),
			},
			{
				// Read once (no wait): what each server says now.
				PreConfig: func() { token = dvToken(t, acctest.East, "v1", domain) },
				Config:    dvConfig(t, domain, "  wait = false"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("present"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("verified"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("zone"), knownvalue.Null()),
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("txt_record_name"), knownvalue.StringExact(domain)),
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("servers"), knownvalue.ListSizeExact(2)),
					statecheck.ExpectKnownValue(dvData, server(0, "server"), knownvalue.StringExact(addrs[0])),
					statecheck.ExpectKnownValue(dvData, server(1, "server"), knownvalue.StringExact(addrs[1])),
					statecheck.ExpectKnownValue(dvData, server(0, "status"), knownvalue.StringExact("nxdomain")),
					statecheck.ExpectKnownValue(dvData, server(1, "present"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(dvData, server(1, "answer"), knownvalue.StringRegexp(regexp.MustCompile(`NXDOMAIN`))),
				},
			},
			{
				Config: dvConfig(t, domain, "  wait = true\n  timeout = \"3s\""),
				ExpectError: regexp.MustCompile(`(?s)Timed Out Waiting For Domain Verification.*` +
					regexp.QuoteMeta(domain) + `.*` + flex("2 of 2 servers without the token") + `.*` +
					regexp.QuoteMeta(addrs[0]) + `:\s+NXDOMAIN.*` + regexp.QuoteMeta(addrs[1]) + `:\s+NXDOMAIN.*` + flex("verified = false")),
			},
			{
				// Published 2s into a wait of up to a minute.
				PreConfig: func() {
					dns := acctest.DNS(t)
					go func() {
						time.Sleep(2 * time.Second)
						published <- dns.AddTXT(acctest.DNSZone, domain, token)
					}()
				},
				Config: dvConfig(t, domain, "  wait = true\n  timeout = \"60s\""),
				ConfigStateChecks: []statecheck.StateCheck{
					tbCheck(func() error { return <-published }),
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("present"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("verified"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("token"), knownvalue.StringFunc(func(v string) error {
						if v != token {
							return fmt.Errorf("token %q, want %q", v, token)
						}
						return nil
					})),
					statecheck.ExpectKnownValue(dvData, server(0, "present"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dvData, server(1, "present"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dvData, server(1, "status"), knownvalue.StringExact("answer")),
					statecheck.ExpectKnownValue(dvData, server(1, "error"), knownvalue.Null()),
					statecheck.CompareValuePairs(dvData, server(0, "values").AtSliceIndex(0), dvData, tfjsonpath.New("txt_record_value"), compare.ValuesSame()),
				},
			},
		},
	})
}

// flex matches text even where terraform wrapped the diagnostic's lines.
func flex(text string) string {
	return strings.ReplaceAll(regexp.QuoteMeta(text), " ", `\s+`)
}

// TestAccDomainVerificationDataSource_cnameChain: the record is found at the
// end of a CNAME chain that leaves the zone and comes back.
func TestAccDomainVerificationDataSource_cnameChain(t *testing.T) {
	acctest.DomainVerificationController(t, acctest.East)
	id := acctest.UniqueName("cname")
	domain := id + "." + acctest.DNSZone
	hop, end := id+"-hop."+acctest.AliasZone, id+"-end."+acctest.DNSZone

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: dvConfig(t, domain, "")},
			{
				PreConfig: func() {
					dns := acctest.DNS(t)
					for _, err := range []error{
						dns.AddCNAME(acctest.DNSZone, domain, hop),
						dns.AddCNAME(acctest.AliasZone, hop, end),
						dns.AddTXT(acctest.DNSZone, end, dvToken(t, acctest.East, "v1", domain)),
					} {
						if err != nil {
							t.Fatal(err)
						}
					}
				},
				Config: dvConfig(t, domain, "  wait = true\n  timeout = \"60s\""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("present"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("verified"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dvData, server(0, "cnames"), knownvalue.ListExact([]knownvalue.Check{
						knownvalue.StringExact(hop), knownvalue.StringExact(end),
					})),
					statecheck.ExpectKnownValue(dvData, server(1, "answer"), knownvalue.StringRegexp(
						regexp.MustCompile(`^CNAME `+regexp.QuoteMeta(hop+" -> "+end)+`: TXT "[0-9a-f]{32}"$`))),
				},
			},
		},
	})
}

// TestAccDomainVerificationDataSource_multiStringTXT: a token split over
// several strings of one record counts (readers join them), next to a record
// so large that the answer needs TCP.
func TestAccDomainVerificationDataSource_multiStringTXT(t *testing.T) {
	acctest.DomainVerificationController(t, acctest.East)
	domain := acctest.UniqueName("multi") + "." + acctest.DNSZone
	big := strings.Repeat("z", 1400) // more than a 1232-byte UDP answer holds

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: dvConfig(t, domain, "")},
			{
				PreConfig: func() {
					token := dvToken(t, acctest.East, "v1", domain)
					dns := acctest.DNS(t)
					if err := dns.AddTXTStrings(acctest.DNSZone, domain, token[:10], token[10:20], token[20:]); err != nil {
						t.Fatal(err)
					}
					if err := dns.AddTXT(acctest.DNSZone, domain, big); err != nil {
						t.Fatal(err)
					}
				},
				Config: dvConfig(t, domain, "  wait = true\n  timeout = \"60s\""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("present"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("verified"), knownvalue.Bool(true)),
					// Both records, the token joined from its three strings (in the
					// order the server returns them).
					statecheck.ExpectKnownValue(dvData, server(0, "values"), knownvalue.ListSizeExact(2)),
					statecheck.ExpectKnownValue(dvData, server(1, "answer"), knownvalue.StringRegexp(
						regexp.MustCompile(`^TXT ("[0-9a-f]{32}", "`+big+`"|"`+big+`", "[0-9a-f]{32}")$`))),
				},
			},
		},
	})
}

// TestAccDomainVerificationDataSource_laggingServer: with the record on one
// of two authoritative servers, neither the data source nor the controller
// accepts it; once the second server has it too, both do.
func TestAccDomainVerificationDataSource_laggingServer(t *testing.T) {
	acctest.DomainVerificationController(t, acctest.East)
	domain := acctest.UniqueName("lag") + "." + acctest.DNSZone
	addrs := acctest.DNS(t).Addrs()
	var token string

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: dvConfig(t, domain, "")},
			{
				PreConfig: func() {
					token = dvToken(t, acctest.East, "v1", domain)
					if err := acctest.DNS(t).Server(0).AddTXT(acctest.DNSZone, domain, token); err != nil {
						t.Fatal(err)
					}
				},
				Config: dvConfig(t, domain, "  wait = true\n  timeout = \"4s\""),
				ExpectError: regexp.MustCompile(`(?s)` + flex("1 of 2 servers without the token") + `.*` +
					regexp.QuoteMeta(addrs[0]) + `:\s+TXT\s+"[0-9a-f]{32}".*` + regexp.QuoteMeta(addrs[1]) + `:\s+NXDOMAIN.*` +
					flex("verified = false: TXT record not found on every authoritative server")),
			},
			{
				Config: dvConfig(t, domain, "  wait = false"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("present"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("verified"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(dvData, server(0, "present"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dvData, server(1, "present"), knownvalue.Bool(false)),
				},
			},
			{
				PreConfig: func() {
					if err := acctest.DNS(t).Server(1).AddTXT(acctest.DNSZone, domain, token); err != nil {
						t.Fatal(err)
					}
				},
				Config: dvConfig(t, domain, "  wait = true\n  timeout = \"60s\""),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("present"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dvData, tfjsonpath.New("verified"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dvData, server(1, "present"), knownvalue.Bool(true)),
				},
			},
		},
	})
}

// checkStatus asserts the result of a check block as recorded in the state:
// a failed check is a warning, so the apply succeeded.
type checkStatus struct {
	name    string
	want    tfjson.CheckStatus
	problem *regexp.Regexp
}

func (c checkStatus) CheckState(_ context.Context, req statecheck.CheckStateRequest, resp *statecheck.CheckStateResponse) {
	if req.State == nil {
		resp.Error = fmt.Errorf("no state")
		return
	}
	for _, chk := range req.State.Checks {
		if chk.Address.Kind != tfjson.CheckKindCheckBlock || chk.Address.Name != c.name {
			continue
		}
		if chk.Status != c.want {
			resp.Error = fmt.Errorf("check %q: status %s, want %s (%+v)", c.name, chk.Status, c.want, chk.Instances)
			return
		}
		if c.problem == nil {
			return
		}
		for _, inst := range chk.Instances {
			for _, p := range inst.Problems {
				if c.problem.MatchString(p.Message) {
					return
				}
			}
		}
		resp.Error = fmt.Errorf("check %q: no problem message matches %s (%+v)", c.name, c.problem, chk.Instances)
		return
	}
	resp.Error = fmt.Errorf("no result for check %q in the state (checks: %+v)", c.name, req.State.Checks)
}

// TestAccDomainVerificationDataSource_checkBlock: inside a check block, an
// unverified domain makes a warning, not an error; once verified it passes.
func TestAccDomainVerificationDataSource_checkBlock(t *testing.T) {
	acctest.DomainVerificationController(t, acctest.East)
	domain := acctest.UniqueName("check") + "." + acctest.DNSZone
	config := dvConfig(t, domain, "") + fmt.Sprintf(`
check "domain_verified" {
  data "zerotrust_domain_verification" "scoped" {
    domain        = zerotrust_domain_verification.this.domain
    nameservers   = %s
    wait          = true
    timeout       = "2s"
    poll_interval = "250ms"
  }
  assert {
    condition     = data.zerotrust_domain_verification.scoped.verified
    error_message = "${data.zerotrust_domain_verification.scoped.domain} is not verified: ${data.zerotrust_domain_verification.scoped.message}"
  }
}
`, acctest.NameserversHCL(t))

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("zerotrust_domain_verification.this", tfjsonpath.New("verified"), knownvalue.Bool(false)),
					checkStatus{name: "domain_verified", want: tfjson.CheckStatusFail, problem: regexp.MustCompile(`(?s)Timed Out Waiting For Domain Verification.*NXDOMAIN`)},
				},
				// Terraform plans every check block's data source to be read
				// again during apply (the check runs last), so no plan with a
				// check block is empty; the resource itself stays unchanged.
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("zerotrust_domain_verification.this", plancheck.ResourceActionNoop),
					},
				},
				ExpectNonEmptyPlan: true,
			},
			{
				PreConfig: func() {
					if err := acctest.DNS(t).AddTXT(acctest.DNSZone, domain, dvToken(t, acctest.East, "v1", domain)); err != nil {
						t.Fatal(err)
					}
					// The check's short wait must not race the controller.
					waitVerified(t, acctest.East, domain)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("zerotrust_domain_verification.this", plancheck.ResourceActionNoop),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					checkStatus{name: "domain_verified", want: tfjson.CheckStatusPass},
				},
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

// TestAccDomainVerificationDataSource_v1alpha1 reads the conditions-based
// shape on a named cluster.
func TestAccDomainVerificationDataSource_v1alpha1(t *testing.T) {
	acctest.DomainVerificationController(t, acctest.West)
	domain := acctest.UniqueName("alpha") + "." + acctest.DNSZone
	config := acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_domain_verification" "this" {
  cluster     = "west"
  domain      = %q
  api_version = "v1alpha1"
}

data "zerotrust_domain_verification" "this" {
  cluster       = zerotrust_domain_verification.this.cluster
  domain        = zerotrust_domain_verification.this.domain
  api_version   = "v1alpha1"
  nameservers   = %s
  wait          = true
  timeout       = "60s"
  poll_interval = "250ms"
}
`, domain, acctest.NameserversHCL(t))

	// The publishing goroutine reports here; a state check reads it on the
	// test's goroutine.
	published := make(chan error, 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			// The record goes in while the data source waits (it is read at
			// apply, after the resource is created).
			PreConfig: func() {
				d, dns := acctest.Dynamic(t, acctest.West), acctest.DNS(t)
				go func() {
					token, err := waitToken(d, acctest.West, "v1alpha1", domain)
					if err == nil {
						err = dns.AddTXT(acctest.DNSZone, domain, token)
					}
					published <- err
				}()
			},
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				tbCheck(func() error { return <-published }),
				statecheck.ExpectKnownValue(dvData, tfjsonpath.New("id"), knownvalue.StringExact("west/"+domain)),
				statecheck.ExpectKnownValue(dvData, tfjsonpath.New("present"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(dvData, tfjsonpath.New("verified"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(dvData, tfjsonpath.New("message"), knownvalue.StringExact("TXT record found on every authoritative server")),
			},
		}},
	})
}

// TestAccDomainVerificationDataSource_invalidInputFailsAtPlan: every bad
// input is refused by `terraform plan`, with the attribute named.
func TestAccDomainVerificationDataSource_invalidInputFailsAtPlan(t *testing.T) {
	cases := []struct {
		name, attr, value, wantError string
	}{
		{"trailing dot", "domain", `"apps.example.com."`, `trailing dot`},
		{"wildcard", "domain", `"*.example.com"`, `wildcard`},
		{"uppercase", "domain", `"APPS.example.com"`, `lowercase`},
		{"nameserver port", "nameservers", `["127.0.0.1:99999"]`, `1 to 65535`},
		{"nameserver host", "nameservers", `["ns_1.example.com:53"]`, `neither an IP address`},
		{"no nameservers", "nameservers", `[]`, `at least 1`},
		{"timeout", "timeout", `"soon"`, `(?i)duration`},
		{"poll interval", "poll_interval", `"-1s"`, `(?i)positive`},
		{"api version", "api_version", `"v1beta1"`, `v1alpha1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			attrs := map[string]string{"domain": `"apps.example.com"`, tc.attr: tc.value}
			var body strings.Builder
			for _, k := range []string{"domain", "nameservers", "timeout", "poll_interval", "api_version"} {
				if v, ok := attrs[k]; ok {
					fmt.Fprintf(&body, "  %s = %s\n", k, v)
				}
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      acctest.ProviderConfig(t) + "data \"zerotrust_domain_verification\" \"this\" {\n" + body.String() + "}\n",
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(`(?s)` + tc.wantError + `.*` + tc.attr + `|(?s)` + tc.attr + `.*` + tc.wantError),
				}},
			})
		})
	}
}
