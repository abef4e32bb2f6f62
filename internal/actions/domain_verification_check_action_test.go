package actions_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
)

// actionsSupported skips action tests on CLIs without actions (Terraform
// < 1.14, OpenTofu).
var actionsSupported = []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)}

// wrapped matches text as Terraform prints it in a diagnostic, wrapped at
// any space.
func wrapped(text string) string {
	return strings.Join(strings.Fields(regexp.QuoteMeta(text)), `\s+`)
}

// triggered is action.<actionType>.<name> with actionConfig, invoked once
// after terraform_data.<name> is created. Each step of a test uses its own
// name: a trigger whose action failed stays in state and fires no more.
func triggered(actionType, name, actionConfig string) string {
	return fmt.Sprintf(`
action %[1]q %[2]q {
  config {
%[3]s
  }
}

resource "terraform_data" %[2]q {
  input = %[2]q
  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.%[1]s.%[2]s]
    }
  }
}
`, actionType, name, actionConfig)
}

// TestAccDomainVerificationCheckAction_token: with every server serving the
// token the action succeeds; with a server serving another value it fails
// naming each server's answer.
func TestAccDomainVerificationCheckAction_token(t *testing.T) {
	dns := acctest.DNS(t)
	domain := acctest.UniqueName("act") + "." + acctest.DNSZone
	if err := dns.AddTXT(acctest.DNSZone, domain, "right-token"); err != nil {
		t.Fatal(err)
	}
	check := func(name, token string) string {
		return acctest.ProviderConfig(t) + triggered("zerotrust_domain_verification_check", name, fmt.Sprintf(`
    domain      = %q
    token       = %q
    nameservers = %s`, domain, token, acctest.NameserversHCL(t)))
	}
	addrs := dns.Addrs()
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		TerraformVersionChecks:   actionsSupported,
		Steps: []resource.TestStep{
			{
				Config: check("wrong", "wrong-token"),
				ExpectError: regexp.MustCompile(`(?s)TXT Record Not Served.*` + wrapped(`"wrong-token"`) +
					`.*` + wrapped(`2 of 2 servers do not serve it`) + `.*` + wrapped(addrs[0]+`: TXT "right-token"`) +
					`.*` + wrapped(addrs[1]+`: TXT "right-token"`)),
			},
			{
				Config: check("right", "right-token"),
			},
		},
	})
}

// TestAccDomainVerificationCheckAction_name checks the token a
// DomainVerification issued: it fails while DNS lacks the record, naming the
// object, and succeeds once every server serves it.
func TestAccDomainVerificationCheckAction_name(t *testing.T) {
	acctest.DomainVerificationController(t, acctest.East)
	dns := acctest.DNS(t)
	domain := acctest.UniqueName("actdv") + "." + acctest.DNSZone
	dv := fmt.Sprintf(`
resource "zerotrust_domain_verification" "this" {
  cluster = "east"
  domain  = %q
}
`, domain)
	check := func(name string) string {
		return acctest.ProviderConfig(t) + dv + triggered("zerotrust_domain_verification_check", name, fmt.Sprintf(`
    cluster     = "east"
    name        = zerotrust_domain_verification.this.name
    nameservers = %s`, acctest.NameserversHCL(t)))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		TerraformVersionChecks:   actionsSupported,
		Steps: []resource.TestStep{
			{
				Config: check("unpublished"),
				ExpectError: regexp.MustCompile(`(?s)TXT Record Not Served.*` + wrapped(fmt.Sprintf("the token of DomainVerification %q", domain)) +
					`.*` + wrapped(`2 of 2 servers do not serve it`) + `.*NXDOMAIN`),
			},
			{
				PreConfig: func() {
					if err := dns.AddTXT(acctest.DNSZone, domain, issuedToken(t, domain)); err != nil {
						t.Fatal(err)
					}
				},
				Config: check("published"),
			},
		},
	})
}

// issuedToken waits for the token the stand-in controller issues.
func issuedToken(t *testing.T, name string) string {
	t.Helper()
	ri := acctest.Dynamic(t, acctest.East).Resource(domainverification.Kind(domainverification.V1).GVR())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		obj, err := ri.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			if tok := domainverification.StatusOf(obj).Token; tok != "" {
				return tok
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("DomainVerification %s has no token after 30s", name)
	return ""
}
