package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

const dvAddr = "zerotrust_domain_verification.this"

var tokenPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

func getDV(t *testing.T, cluster, apiVersion, name string) (*unstructured.Unstructured, error) {
	t.Helper()
	return acctest.Dynamic(t, cluster).Resource(domainverification.Kind(apiVersion).GVR()).Get(context.Background(), name, metav1.GetOptions{})
}

// dvStatus asks the cluster, not the state, for the object's status.
func dvStatus(t *testing.T, cluster, apiVersion, name string) domainverification.Status {
	t.Helper()
	obj, err := getDV(t, cluster, apiVersion, name)
	if err != nil {
		t.Fatalf("%s: get DomainVerification %s: %v", cluster, name, err)
	}
	return domainverification.StatusOf(obj)
}

// waitVerified polls the cluster until the stand-in controller has given
// the wanted verdict, so that the next refresh reads it.
func waitVerified(t *testing.T, cluster, apiVersion, name string, want bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := dvStatus(t, cluster, apiVersion, name)
		if st.Verified != nil && *st.Verified == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: DomainVerification %s: verified is not %t after 60s (status %+v)", cluster, name, want, st)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// sameTokenOnCluster compares a state value with status.token on the cluster.
func sameTokenOnCluster(t *testing.T, cluster, apiVersion, name string) knownvalue.Check {
	return knownvalue.StringFunc(func(v string) error {
		if got := dvStatus(t, cluster, apiVersion, name).Token; got != v {
			return fmt.Errorf("state token %q, cluster status.token %q", v, got)
		}
		return nil
	})
}

func checkDVGone(t *testing.T, cluster, name string) resource.TestCheckFunc {
	return acctest.CheckGone(t, cluster, domainverification.Kind(domainverification.V1).GVR(), "", name)
}

func dvConfig(t *testing.T, body string) string {
	t.Helper()
	return acctest.ProviderConfig(t) + "\nresource \"zerotrust_domain_verification\" \"this\" {\n" + body + "\n}\n"
}

// TestAccDomainVerification_tokenIssuedThenVerified: the stand-in controller
// issues a token through the real API server; it marks the domain verified
// only after it finds the token in DNS (real Knot servers); a refresh shows it.
func TestAccDomainVerification_tokenIssuedThenVerified(t *testing.T) {
	acctest.DomainVerificationController(t, acctest.East)
	domain := acctest.UniqueName("tok") + "." + acctest.DNSZone
	config := dvConfig(t, fmt.Sprintf("  domain = %q", domain))

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkDVGone(t, acctest.East, domain),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(dvAddr, plancheck.ResourceActionCreate),
						plancheck.ExpectKnownValue(dvAddr, tfjsonpath.New("name"), knownvalue.StringExact(domain)),
						plancheck.ExpectKnownValue(dvAddr, tfjsonpath.New("txt_record_name"), knownvalue.StringExact(domain)),
						plancheck.ExpectUnknownValue(dvAddr, tfjsonpath.New("token")),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("id"), knownvalue.StringExact(domain)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("api_version"), knownvalue.StringExact("v1")),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("token"), knownvalue.StringRegexp(tokenPattern)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("token"), sameTokenOnCluster(t, acctest.East, "v1", domain)),
					statecheck.CompareValuePairs(dvAddr, tfjsonpath.New("token"), dvAddr, tfjsonpath.New("txt_record_value"), compare.ValuesSame()),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("verified"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("message"), knownvalue.StringRegexp(regexp.MustCompile(`TXT|publish`))),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("force_conflicts"), knownvalue.Bool(false)),
				},
			},
			{
				// The record appears in DNS; only the controller's own lookup
				// flips verified, which the refresh then reads.
				PreConfig: func() {
					if err := acctest.DNS(t).AddTXT(acctest.DNSZone, domain, dvStatus(t, acctest.East, "v1", domain).Token); err != nil {
						t.Fatal(err)
					}
					waitVerified(t, acctest.East, "v1", domain, true)
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("verified"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("message"), knownvalue.StringExact("TXT record found on every authoritative server")),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("last_checked"), knownvalue.StringRegexp(regexp.MustCompile(`^\d{4}-\d\d-\d\dT`))),
				},
			},
			{
				ResourceName:      dvAddr,
				ImportState:       true,
				ImportStateId:     domain,
				ImportStateVerify: true,
				// The controller rewrites lastChecked on every check.
				ImportStateVerifyIgnore: []string{"last_checked", "next_verification"},
			},
			{
				// Deleted outside Terraform: the plan creates it again, and the
				// controller issues a new token.
				PreConfig: func() {
					if err := acctest.Dynamic(t, acctest.East).Resource(kube.DomainVerificationV1.GVR()).Delete(context.Background(), domain, metav1.DeleteOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(dvAddr, plancheck.ResourceActionCreate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("token"), sameTokenOnCluster(t, acctest.East, "v1", domain)),
				},
			},
		},
	})
}

// TestAccDomainVerification_v1alpha1 writes the conditions-based shape on a
// named cluster, replaces the object when the domain changes, and imports it
// back with the API version read from the object.
func TestAccDomainVerification_v1alpha1(t *testing.T) {
	acctest.DomainVerificationController(t, acctest.West)
	id := acctest.UniqueName("alpha")
	name := "dv-" + id
	first, second := id+"."+acctest.DNSZone, id+"-b."+acctest.DNSZone
	config := func(domain string) string {
		return dvConfig(t, fmt.Sprintf(`  cluster     = "west"
  name        = %q
  domain      = %q
  api_version = "v1alpha1"`, name, domain))
	}
	compareToken := statecheck.CompareValue(compare.ValuesDiffer())

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkDVGone(t, acctest.West, name),
		Steps: []resource.TestStep{
			{
				PreConfig: func() {
					if err := acctest.DNS(t).AddTXT(acctest.DNSZone, first, "not-the-token"); err != nil {
						t.Fatal(err)
					}
				},
				Config: config(first),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("id"), knownvalue.StringExact("west/"+name)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("token"), sameTokenOnCluster(t, acctest.West, "v1alpha1", name)),
					// The Verified condition is False: the record holds another value.
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("verified"), knownvalue.Bool(false)),
					compareToken.AddStateValue(dvAddr, tfjsonpath.New("token")),
					acctest.ClusterCheck(func(*terraform.State) error {
						obj, err := getDV(t, acctest.West, "v1alpha1", name)
						if err != nil {
							return err
						}
						conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
						if len(conds) != 1 || !strings.Contains(fmt.Sprint(conds[0]), "type:Verified") {
							return fmt.Errorf("want one Verified condition in the v1alpha1 status, got %v", conds)
						}
						return nil
					}),
				},
			},
			{
				PreConfig: func() {
					if err := acctest.DNS(t).AddTXT(acctest.DNSZone, first, dvStatus(t, acctest.West, "v1alpha1", name).Token); err != nil {
						t.Fatal(err)
					}
					waitVerified(t, acctest.West, "v1alpha1", name, true)
				},
				Config: config(first),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("verified"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("message"), knownvalue.StringExact("TXT record found on every authoritative server")),
				},
			},
			{
				ResourceName:            dvAddr,
				ImportState:             true,
				ImportStateId:           "west/" + name,
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"last_checked", "next_verification"},
			},
			{
				// spec.domain is immutable: a new domain is a new object and token.
				Config: config(second),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(dvAddr, plancheck.ResourceActionReplace),
						plancheck.ExpectKnownValue(dvAddr, tfjsonpath.New("txt_record_name"), knownvalue.StringExact(second)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("domain"), knownvalue.StringExact(second)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("verified"), knownvalue.Bool(false)),
					compareToken.AddStateValue(dvAddr, tfjsonpath.New("token")),
				},
			},
			{
				// The API version changes in place: same object, other shape.
				Config: strings.Replace(config(second), `"v1alpha1"`, `"v1"`, 1),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(dvAddr, plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("api_version"), knownvalue.StringExact("v1")),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("token"), sameTokenOnCluster(t, acctest.West, "v1alpha1", name)),
				},
			},
		},
	})
}

// TestAccDomainVerification_noControllerTimesOut: without a controller no
// token comes; creation fails after timeouts.create naming what to install.
func TestAccDomainVerification_noControllerTimesOut(t *testing.T) {
	// The stand-in ignores domains outside the test zones.
	domain := acctest.UniqueName("orphan") + ".example.com"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkDVGone(t, acctest.East, domain),
		Steps: []resource.TestStep{{
			Config: dvConfig(t, fmt.Sprintf("  domain = %q\n  timeouts {\n    create = \"2s\"\n  }", domain)),
			ExpectError: regexp.MustCompile(
				`(?s)Timed Out Waiting For Domain Verification Token.*` + regexp.QuoteMeta(domain) + `.*Kuadrant.*timeouts\.create`),
		}},
	})
}

func TestAccDomainVerification_missingCRD(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: dvConfig(t, fmt.Sprintf("  cluster = %q\n  domain = %q", acctest.Bare, acctest.UniqueName("nocrd")+".example.com")),
			ExpectError: regexp.MustCompile(
				`(?s)CustomResourceDefinition Not Installed.*domainverifications\.kuadrant\.dev.*Kuadrant`),
		}},
	})
}

// TestAccDomainVerification_invalidInputFailsAtPlan: every bad input is
// refused by `terraform plan`, with the attribute named.
func TestAccDomainVerification_invalidInputFailsAtPlan(t *testing.T) {
	cases := []struct {
		name, attr, value, wantError string
	}{
		{"uppercase", "domain", `"Apps.Example.com"`, `lowercase`},
		{"trailing dot", "domain", `"apps.example.com."`, `trailing dot`},
		{"wildcard", "domain", `"*.apps.example.com"`, `wildcard`},
		{"too long", "domain", fmt.Sprintf("%q", strings.Repeat(strings.Repeat("a", 63)+".", 4)[:254]), `at most 253`},
		{"label too long", "domain", fmt.Sprintf("%q", strings.Repeat("a", 64)+".example.com"), `at most 63`},
		{"single label", "domain", `"localhost"`, `single label`},
		{"underscore", "domain", `"_verify.example.com"`, `underscore`},
		{"url", "domain", `"https://apps.example.com"`, `scheme`},
		{"empty label", "domain", `"apps..example.com"`, `empty label`},
		{"api version", "api_version", `"v2"`, `v1alpha1`},
		{"object name", "name", `"Bad_Name"`, `(?i)name`},
		{"unknown cluster", "cluster", `"north"`, `(?s)Unknown Cluster.*"east", "west"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			attrs := map[string]string{"domain": `"apps.example.com"`, tc.attr: tc.value}
			var body strings.Builder
			for _, k := range []string{"cluster", "name", "domain", "api_version"} {
				if v, ok := attrs[k]; ok {
					fmt.Fprintf(&body, "  %s = %s\n", k, v)
				}
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      dvConfig(t, body.String()),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(`(?s)` + tc.wantError + `.*` + tc.attr + `|(?s)` + tc.attr + `.*` + tc.wantError),
				}},
			})
		})
	}
}
