package resources_test

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
)

// hclList renders n strings made by item as an HCL list.
func hclList(n int, item func(int) string) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf("%q", item(i))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// hclMap renders n entries made by entry as an HCL object.
func hclMap(n int, entry func(int) (string, string)) string {
	parts := make([]string, n)
	for i := range parts {
		k, v := entry(i)
		parts[i] = fmt.Sprintf("%q = %q", k, v)
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// hclConfig renders one resource block from attribute => HCL value.
func hclConfig(t *testing.T, resourceType string, attrs map[string]string) string {
	t.Helper()
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var body strings.Builder
	for _, k := range keys {
		if attrs[k] != "" {
			fmt.Fprintf(&body, "  %s = %s\n", k, attrs[k])
		}
	}
	return acctest.ProviderConfig(t) + "resource \"" + resourceType + "\" \"this\" {\n" + body.String() + "}\n"
}

type planFailureCase struct {
	name string
	// attrs replace (or, with "", remove) attributes of the valid configuration.
	attrs map[string]string
	// want must appear in the error, before or after the attribute path.
	want, attrPath string
}

func runPlanFailureCases(t *testing.T, resourceType string, valid map[string]string, cases []planFailureCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			attrs := map[string]string{}
			for k, v := range valid {
				attrs[k] = v
			}
			for k, v := range tc.attrs {
				attrs[k] = v
			}
			// Terraform wraps long messages: any space may be a line break.
			want := strings.ReplaceAll(tc.want, " ", `\s+`)
			path := regexp.QuoteMeta(tc.attrPath)
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      hclConfig(t, resourceType, attrs),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(`(?s)(` + want + `.*` + path + `|` + path + `.*` + want + `)`),
				}},
			})
		})
	}
}

// TestAccIstioCSR_invalidInputFailsAtPlan mirrors each rule of the IstioCSR
// CRD (internal/testkit/harness/crds/testdata/istiocsrs.operator.openshift.io, the
// invalid-* files) plus the duration ordering and the Kubernetes rules for
// the agent's pod settings: each must fail `terraform plan`, naming the
// attribute, before anything reaches a cluster.
func TestAccIstioCSR_invalidInputFailsAtPlan(t *testing.T) {
	valid := map[string]string{
		"cluster":      `"east"`,
		"namespace":    `"cert-manager"`,
		"cert_manager": `{ issuer_ref = { name = "istio-ca", kind = "Issuer" } }`,
		"istiod_tls":   `{ trust_domain = "cluster.local" }`,
		"istio":        `{ namespace = "istio-system" }`,
	}
	tls := func(extra string) map[string]string {
		return map[string]string{"istiod_tls": `{ trust_domain = "cluster.local", ` + extra + ` }`}
	}
	long := func(n int) string { return strings.Repeat("a", n) }
	cases := []planFailureCase{
		{"issuer kind", map[string]string{"cert_manager": `{ issuer_ref = { name = "istio-ca", kind = "Certificate" } }`},
			`"Issuer".*"ClusterIssuer"`, "cert_manager.issuer_ref.kind"},
		{"issuer group", map[string]string{"cert_manager": `{ issuer_ref = { name = "istio-ca", kind = "Issuer", group = "cert-manager.example.com" } }`},
			`cert-manager\.io`, "cert_manager.issuer_ref.group"},
		{"issuer without kind", map[string]string{"cert_manager": `{ issuer_ref = { name = "istio-ca" } }`}, `attribute "kind" is required`, "cert_manager"},
		{"issuer empty name", map[string]string{"cert_manager": `{ issuer_ref = { name = "", kind = "Issuer" } }`}, `at least 1`, "cert_manager.issuer_ref.name"},
		{"missing issuer ref", map[string]string{"cert_manager": `{}`}, `attribute "issuer_ref" is required`, "cert_manager"},
		{"ECDSA with the default size", tls(`private_key_algorithm = "ECDSA"`),
			`ECDSA keys are 256 or 384 bits, not 2048.*set private_key_size explicitly`, "istiod_tls.private_key_size"},
		{"ECDSA with an RSA size", tls(`private_key_algorithm = "ECDSA", private_key_size = 2048`), `privateKeySize must match`, "istiod_tls.private_key_size"},
		{"RSA with an ECDSA size", tls(`private_key_size = 256`), `RSA keys are 2048, 4096 or 8192 bits`, "istiod_tls.private_key_size"},
		{"key size enum", tls(`private_key_size = 1024`), `value must be one of`, "istiod_tls.private_key_size"},
		{"key algorithm enum", tls(`private_key_algorithm = "Ed25519"`), `value must be one of`, "istiod_tls.private_key_algorithm"},
		{"log level 0", map[string]string{"log_level": `0`}, `between 1 and 5`, "log_level"},
		{"log level 6", map[string]string{"log_level": `6`}, `between 1 and 5`, "log_level"},
		{"log format", map[string]string{"log_format": `"xml"`}, `value must be one of`, "log_format"},
		{"empty trust domain", map[string]string{"istiod_tls": `{ trust_domain = "" }`}, `length must be between 1 and 63`, "istiod_tls.trust_domain"},
		{"trust domain too long", map[string]string{"istiod_tls": fmt.Sprintf(`{ trust_domain = %q }`, long(64))}, `length must be between 1 and 63`, "istiod_tls.trust_domain"},
		// The released CRD checks only the length; the SPIFFE rules apply.
		{"trust domain not a SPIFFE trust domain", map[string]string{"istiod_tls": `{ trust_domain = "Cluster.Local" }`}, `Invalid Trust Domain`, "istiod_tls.trust_domain"},
		{"common name too long", tls(fmt.Sprintf(`common_name = %q`, long(65))), `length must be at most 64`, "istiod_tls.common_name"},
		{"26 DNS names", tls("certificate_dns_names = " + hclList(26, func(i int) string { return fmt.Sprintf("n%d.example.com", i) })),
			`at most 25`, "istiod_tls.certificate_dns_names"},
		{"duplicate DNS names", tls(`certificate_dns_names = ["a.example.com", "a.example.com"]`), `duplicate values`, "certificate_dns_names"},
		{"DNS name too long", tls(fmt.Sprintf(`certificate_dns_names = [%q]`, long(254))), `between 1 and 253`, "istiod_tls.certificate_dns_names[0]"},
		{"renew before not before expiry", tls(`certificate_renew_before = "1h"`),
			`\(1h0m0s\) must be shorter than certificate_duration \(1h0m0s\)`, "istiod_tls.certificate_renew_before"},
		{"duration above the default maximum", tls(`certificate_duration = "2h"`),
			`\(2h0m0s\) must not exceed max_certificate_duration \(1h0m0s\)`, "istiod_tls.certificate_duration"},
		{"duration that does not parse", tls(`max_certificate_duration = "1d"`), `unknown unit "d"`, "istiod_tls.max_certificate_duration"},
		{"cluster ID too long", map[string]string{"server": fmt.Sprintf(`{ cluster_id = %q }`, long(254))}, `at most 253`, "server.cluster_id"},
		{"port 0", map[string]string{"server": `{ port = 0 }`}, `between 1 and 65535`, "server.port"},
		{"port 65536", map[string]string{"server": `{ port = 65536 }`}, `between 1 and 65535`, "server.port"},
		{"26 revisions", map[string]string{"istio": `{ namespace = "istio-system", revisions = ` + hclList(26, func(i int) string { return fmt.Sprintf("rev%d", i) }) + ` }`},
			`at most 25`, "istio.revisions"},
		{"revision too long", map[string]string{"istio": fmt.Sprintf(`{ namespace = "istio-system", revisions = [%q] }`, long(64))}, `between 1 and 63`, "istio.revisions[0]"},
		{"istio namespace not a DNS label", map[string]string{"istio": `{ namespace = "istio.system" }`}, `Invalid DNS Label`, "istio.namespace"},
		{"istio namespace missing", map[string]string{"istio": `{}`}, `attribute "namespace" is required`, "istio"},
		{"namespace selector too long", map[string]string{"istio_data_plane_namespace_selector": fmt.Sprintf(`"a=%s"`, long(4095))}, `at most 4096`, "istio_data_plane_namespace_selector"},
		{"namespace selector syntax", map[string]string{"istio_data_plane_namespace_selector": `"env in (prod"`}, `Invalid Label Selector`, "istio_data_plane_namespace_selector"},
		{"51 node selector entries", map[string]string{"node_selector": hclMap(51, func(i int) (string, string) { return fmt.Sprintf("k%d", i), "v" })}, `at most 50`, "node_selector"},
		{"21 controller labels", map[string]string{"controller_config": "{ labels = " + hclMap(21, func(i int) (string, string) { return fmt.Sprintf("l%d", i), "v" }) + " }"},
			`at most 20`, "controller_config.labels"},
		{"bad label key", map[string]string{"controller_config": `{ labels = { "my team" = "mesh" } }`}, `Invalid Label Key`, "controller_config.labels"},
		{"51 tolerations", map[string]string{"tolerations": "[" + strings.Repeat(`{ key = "t", operator = "Exists" }, `, 51) + "]"}, `at most 50`, "tolerations"},
		{"toleration value with Exists", map[string]string{"tolerations": `[{ key = "t", operator = "Exists", value = "v" }]`}, `Toleration Value With Exists`, "tolerations[0].value"},
		{"toleration seconds without NoExecute", map[string]string{"tolerations": `[{ key = "t", operator = "Exists", effect = "NoSchedule", toleration_seconds = 5 }]`},
			`Toleration Seconds Without NoExecute`, "tolerations[0].toleration_seconds"},
		{"CA certificate key pattern", map[string]string{"cert_manager": `{ issuer_ref = { name = "istio-ca", kind = "Issuer" }, istio_ca_certificate = { name = "istio-ca-root", key = "ca crt" } }`},
			`letters, digits`, "cert_manager.istio_ca_certificate.key"},
		{"CA certificate without key", map[string]string{"cert_manager": `{ issuer_ref = { name = "istio-ca", kind = "Issuer" }, istio_ca_certificate = { name = "istio-ca-root" } }`},
			`attribute "key" is required`, "cert_manager"},
		{"affinity with a misspelt field", map[string]string{"affinity": `jsonencode({ nodeAfinity = {} })`}, `unknown field "nodeAfinity"`, "affinity"},
		{"affinity not JSON", map[string]string{"affinity": `"nodeAffinity"`}, `Invalid JSON`, "affinity"},
		{"duplicate resource claim", map[string]string{"resources": `{ claims = [{ name = "gpu" }, { name = "gpu" }] }`}, `Duplicate Resource Claim`, "resources.claims[1].name"},
		{"resource quantity", map[string]string{"resources": `{ requests = { memory = "64MB" } }`}, `Invalid Resource Quantity`, `resources.requests["memory"]`},
		// The operator checks the agent's resources as Kubernetes does and
		// retries forever ("The agent's resources are checked").
		{"request above limit", map[string]string{"resources": `{ requests = { memory = "256Mi" }, limits = { memory = "0.125Gi" } }`},
			`Request Above Limit`, `resources.requests["memory"]`},
		{"namespace", map[string]string{"namespace": `"Cert_Manager"`}, `Invalid DNS Label`, "namespace"},
		{"unknown cluster key", map[string]string{"cluster": `"north"`}, `Unknown Cluster`, "cluster"},
	}
	runPlanFailureCases(t, "zerotrust_istio_csr", valid, cases)
}

// TestAccIstioCSR_validLimitsPlan plans a configuration at every limit
// (valid-limits-at-maximum.yaml, with issuer_ref spelled as cert-manager
// requires): nothing at a limit may be refused, and the plan is a create
// carrying the configured values.
func TestAccIstioCSR_validLimitsPlan(t *testing.T) {
	const addr = "zerotrust_istio_csr.this"
	caConfigMap := acctest.UniqueName("istio-ca-root")
	acctest.EnsureNamespace(t, acctest.East, "istio-system")
	acctest.CreateConfigMap(t, acctest.East, "istio-system", caConfigMap, map[string]any{"ca.crt": acctest.TestCertificatePEM(t, true)})
	attrs := map[string]string{
		"cluster":   `"east"`,
		"namespace": `"cert-manager"`,
		// The exact spellings (see TestAccIstioCSROperator_issuerSpelling),
		// and a CA ConfigMap the plan finds (see checkIstioCACertificate).
		"cert_manager": `{ issuer_ref = { name = "istio-ca", kind = "ClusterIssuer", group = "cert-manager.io" }, ` +
			`istio_ca_certificate = { name = "` + caConfigMap + `", namespace = "istio-system", key = "ca.crt" } }`,
		"istiod_tls": fmt.Sprintf(`{ trust_domain = %q, common_name = %q, certificate_dns_names = %s, `+
			`private_key_algorithm = "ECDSA", private_key_size = 384, certificate_duration = "4h", certificate_renew_before = "3h59m", max_certificate_duration = "4h" }`,
			strings.Repeat("a", 63), strings.Repeat("c", 64), hclList(25, func(i int) string { return fmt.Sprintf("n%d.example.com", i) })),
		"istio":                               `{ namespace = "istio-system", revisions = ` + hclList(25, func(i int) string { return fmt.Sprintf("rev%d", i) }) + ` }`,
		"server":                              fmt.Sprintf(`{ cluster_id = %q, port = 65535 }`, strings.Repeat("k", 253)),
		"istio_data_plane_namespace_selector": fmt.Sprintf(`"a=%s"`, strings.Repeat("b", 63)),
		"node_selector":                       hclMap(50, func(i int) (string, string) { return fmt.Sprintf("k%d", i), "v" }),
		"controller_config":                   "{ labels = " + hclMap(20, func(i int) (string, string) { return fmt.Sprintf("l%d", i), "v" }) + " }",
		"tolerations":                         "[" + strings.Repeat(`{ key = "t", operator = "Exists" }, `, 50) + "]",
		"log_level":                           `5`,
		"log_format":                          `"json"`,
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:             hclConfig(t, "zerotrust_istio_csr", attrs),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PostApplyPostRefresh: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(addr, plancheck.ResourceActionCreate),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("cluster"), knownvalue.StringExact("east")),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("namespace"), knownvalue.StringExact("cert-manager")),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("server").AtMapKey("port"), knownvalue.Int64Exact(65535)),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("istiod_tls").AtMapKey("private_key_size"), knownvalue.Int64Exact(384)),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("istiod_tls").AtMapKey("certificate_dns_names"), knownvalue.ListSizeExact(25)),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("istio").AtMapKey("revisions"), knownvalue.ListSizeExact(25)),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("node_selector"), knownvalue.MapSizeExact(50)),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("tolerations"), knownvalue.ListSizeExact(50)),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("log_level"), knownvalue.Int64Exact(5)),
					plancheck.ExpectKnownValue(addr, tfjsonpath.New("log_format"), knownvalue.StringExact("json")),
				},
			},
		}},
	})
}
