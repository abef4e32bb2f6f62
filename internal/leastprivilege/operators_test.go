package leastprivilege_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
)

// The issuers and CA objects the IstioCSR exercises read.
const (
	csrIssuer        = "lp-ca"
	csrClusterIssuer = "lp-cluster-ca"
	// csrOtherIssuer is a second ClusterIssuer: naming it plans a
	// replacement, which checks the issuer at plan time.
	csrOtherIssuer = "lp-cluster-ca2"
	csrCASecret    = "lp-root"
	csrCAConfigMap = "istio-ca-root"
)

// istioCSRObjects creates, as cert-manager's users would, a CA Issuer (with
// its Secret) in the istio namespace, a ClusterIssuer and the CA ConfigMap.
func (e *env) istioCSRObjects(t *testing.T) {
	t.Helper()
	ca := acctest.TestCertificatePEM(t, true)
	acctest.CreateSecret(t, clusterName, istioNS, csrCASecret, map[string]string{"ca.crt": ca, "tls.crt": ca, "tls.key": "unused"})
	acctest.CertManagerIssuerSpec(t, clusterName, istioNS, csrIssuer, map[string]any{"ca": map[string]any{"secretName": csrCASecret}}, true)
	acctest.CertManagerIssuer(t, clusterName, "", csrClusterIssuer, true)
	acctest.CertManagerIssuer(t, clusterName, "", csrOtherIssuer, true)
	acctest.EnsureNamespace(t, clusterName, csrNS)
	acctest.CreateConfigMap(t, clusterName, csrNS, csrCAConfigMap, map[string]any{"ca.crt": ca})
}

// istioCSRConfig is an IstioCSR in csrNS: v1 with the CA Issuer (the plan
// reads its Secret), v2 an update that adds the CA ConfigMap, v3 a
// replacement with the ClusterIssuer (destroy, then create); for the rule
// exercises, from v3: v4 adds the CA ConfigMap, v5 changes the log level
// (in-place updates), v6 names another ClusterIssuer (a replacement).
func istioCSRConfig(v int) string {
	issuer := fmt.Sprintf(`issuer_ref = { name = %q, kind = "Issuer" }`, csrIssuer)
	extra, top := "", ""
	ca := fmt.Sprintf(`
    istio_ca_certificate = { name = %q, namespace = %q, key = "ca.crt" }`, csrCAConfigMap, csrNS)
	switch v {
	case 2:
		extra = ca
	case 3:
		issuer = fmt.Sprintf(`issuer_ref = { name = %q, kind = "ClusterIssuer" }`, csrClusterIssuer)
	case 4:
		issuer, extra = fmt.Sprintf(`issuer_ref = { name = %q, kind = "ClusterIssuer" }`, csrClusterIssuer), ca
	case 5:
		issuer, top = fmt.Sprintf(`issuer_ref = { name = %q, kind = "ClusterIssuer" }`, csrClusterIssuer), "\n  log_level = 3"
	case 6:
		issuer = fmt.Sprintf(`issuer_ref = { name = %q, kind = "ClusterIssuer" }`, csrOtherIssuer)
	}
	return fmt.Sprintf(`
resource "zerotrust_istio_csr" "this" {
  namespace = %q%s
  cert_manager = {
    %s%s
  }
  istiod_tls = { trust_domain = "cluster.local" }
  istio      = { namespace = %q }
}
`, csrNS, top, issuer, extra, istioNS)
}

// istioCSRLifecycle runs create, refresh, update, import by ID and a
// replacement (whose destroy removes what the operator stand-in created).
func (e *env) istioCSRLifecycle(t *testing.T) string {
	acctest.ResetIstioCSRs(t, clusterName)
	e.istioCSRObjects(t)
	dir := e.workdir(t, istioCSRConfig(1))
	expect(t, "IstioCSR create", e.mustTF(t, dir, "apply", "-auto-approve"), "Resources: 1 added")
	e.emptyPlan(t, dir)
	e.write(t, dir, "main.tf", istioCSRConfig(2))
	expect(t, "IstioCSR update", e.mustTF(t, dir, "apply", "-auto-approve"), "0 added, 1 changed, 0 destroyed")
	e.emptyPlan(t, dir)
	e.mustTF(t, dir, "state", "rm", "zerotrust_istio_csr.this")
	e.write(t, dir, "import.tf", fmt.Sprintf(`
import {
  to = zerotrust_istio_csr.this
  id = %q
}
`, csrNS))
	expect(t, "IstioCSR import", e.mustTF(t, dir, "apply", "-auto-approve"), "1 imported, 0 added")
	e.emptyPlan(t, dir)
	if err := os.Remove(filepath.Join(dir, "import.tf")); err != nil {
		t.Fatal(err)
	}
	e.write(t, dir, "main.tf", istioCSRConfig(3))
	expect(t, "IstioCSR replace", e.mustTF(t, dir, "apply", "-auto-approve"), "1 added, 0 changed, 1 destroyed")
	e.emptyPlan(t, dir)
	return dir
}

// dvDomain is the domain the DomainVerification exercises verify.
const dvDomain = "lp." + acctest.DNSZone

func (e *env) domainConfig(t *testing.T, v int) string {
	t.Helper()
	return fmt.Sprintf(`
resource "zerotrust_domain_verification" "apps" {
  domain          = %[1]q
  force_conflicts = %[2]t
}

data "zerotrust_domain_verification" "apps" {
  domain      = zerotrust_domain_verification.apps.domain
  nameservers = %[3]s
}

action "zerotrust_domain_verification_check" "apps" {
  config {
    name        = zerotrust_domain_verification.apps.name
    nameservers = %[3]s
  }
}

output "token" {
  value = zerotrust_domain_verification.apps.token
}
`, dvDomain, v == 2, acctest.NameserversHCL(t))
}

// domainLifecycle runs create, refresh, update and import by identity of a
// DomainVerification, reads the data source, publishes the token and runs
// the check action.
func (e *env) domainLifecycle(t *testing.T) string {
	acctest.DNS(t)
	dir := e.workdir(t, e.domainConfig(t, 1))
	expect(t, "DomainVerification create", e.mustTF(t, dir, "apply", "-auto-approve"), "Resources: 1 added")
	e.emptyPlan(t, dir)
	e.write(t, dir, "main.tf", e.domainConfig(t, 2))
	expect(t, "DomainVerification update", e.mustTF(t, dir, "apply", "-auto-approve"), "0 added, 1 changed, 0 destroyed")
	e.emptyPlan(t, dir)
	e.mustTF(t, dir, "state", "rm", "zerotrust_domain_verification.apps")
	e.write(t, dir, "import.tf", fmt.Sprintf(`
import {
  to       = zerotrust_domain_verification.apps
  identity = { name = %q }
}
`, dvDomain))
	expect(t, "DomainVerification import", e.mustTF(t, dir, "apply", "-auto-approve"), "1 imported, 0 added")
	e.emptyPlan(t, dir)

	if err := acctest.DNS(t).AddTXT(acctest.DNSZone, dvDomain, e.dvToken(t)); err != nil {
		t.Fatal(err)
	}
	out := e.mustTF(t, dir, "apply", "-auto-approve", "-invoke=action.zerotrust_domain_verification_check.apps")
	expect(t, "domain_verification_check", out, "Action complete")
	return dir
}

// dvToken is the token the stand-in controller issued for dvDomain.
func (e *env) dvToken(t *testing.T) string {
	t.Helper()
	ri := acctest.Dynamic(t, clusterName).Resource(domainverification.Kind(domainverification.V1).GVR())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	obj, err := ri.Get(ctx, dvDomain, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tok := domainverification.StatusOf(obj).Token
	if strings.TrimSpace(tok) == "" {
		t.Fatalf("DomainVerification %s has no token", dvDomain)
	}
	return tok
}
