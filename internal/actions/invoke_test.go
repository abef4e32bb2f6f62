package actions_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// TestAccDomainVerificationCheckAction_invoke runs the action the other way
// users run one-off operations: `terraform apply -invoke=action.<type>.<name>`
// (Terraform >= 1.14), which plans and runs only that action. terraform-plugin-
// testing has no step for -invoke, so the CLI runs directly against the
// provider served in process.
func TestAccDomainVerificationCheckAction_invoke(t *testing.T) {
	dns := acctest.DNS(t)
	domain := acctest.UniqueName("inv") + "." + acctest.DNSZone
	if err := dns.AddTXT(acctest.DNSZone, domain, "invoked-token"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	config := acctest.RequiredProviders + acctest.ProviderConfig(t) + fmt.Sprintf(`
action "zerotrust_domain_verification_check" "right" {
  config {
    domain      = %[1]q
    token       = "invoked-token"
    nameservers = %[2]s
  }
}

action "zerotrust_domain_verification_check" "wrong" {
  config {
    domain      = %[1]q
    token       = "another-token"
    nameservers = %[2]s
  }
}
`, domain, acctest.NameserversHCL(t))
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	reattach := acctest.ServeProvider(t)
	acctest.MustTerraform(t, "terraform", dir, reattach, "init")

	out := acctest.MustTerraform(t, "terraform", dir, reattach, "apply", "-auto-approve",
		"-invoke=action.zerotrust_domain_verification_check.right")
	if !regexp.MustCompile(`(?s)Action started: action\.zerotrust_domain_verification_check\.right.*Action complete`).MatchString(out) {
		t.Errorf("apply -invoke of the right token did not run the action to completion:\n%s", out)
	}

	out, code := acctest.Terraform(t, "terraform", dir, reattach, "apply", "-auto-approve",
		"-invoke=action.zerotrust_domain_verification_check.wrong")
	if code == 0 || !regexp.MustCompile(`(?s)TXT Record Not Served.*`+wrapped(`"another-token"`)+`.*`+
		wrapped(`TXT "invoked-token"`)).MatchString(out) {
		t.Errorf("apply -invoke of a wrong token: exit %d, want a failure naming what the servers answer:\n%s", code, out)
	}
}
