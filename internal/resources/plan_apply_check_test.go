package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/protoserver"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
)

// planRecorder serves the provider like acctest.ProtoV6ProviderFactories and
// keeps the diagnostics of every PlanResourceChange answer: the terraform
// CLI prints plan warnings, but terraform-plugin-testing offers no way to
// assert them.
type planRecorder struct {
	mu    sync.Mutex
	diags []*tfprotov6.Diagnostic
}

type recordingServer struct {
	tfprotov6.ProviderServer
	rec *planRecorder
}

func (s recordingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	resp, err := s.ProviderServer.PlanResourceChange(ctx, req)
	if resp != nil {
		s.rec.mu.Lock()
		s.rec.diags = append(s.rec.diags, resp.Diagnostics...)
		s.rec.mu.Unlock()
	}
	return resp, err
}

func (r *planRecorder) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	serve := protoserver.New(provider.New("test"), protoserver.WithFastPaths(provider.FastPaths))
	return map[string]func() (tfprotov6.ProviderServer, error){
		"zerotrust": func() (tfprotov6.ProviderServer, error) {
			s, err := serve()
			if err != nil {
				return nil, err
			}
			return recordingServer{ProviderServer: s, rec: r}, nil
		},
	}
}

// take returns the diagnostics recorded since the last call and forgets them.
func (r *planRecorder) take() []*tfprotov6.Diagnostic {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.diags
	r.diags = nil
	return d
}

const conflictWarning = "Apply Will Conflict With Another Field Manager"

// requireConflictWarning fails unless diags hold the plan-time conflict
// warning naming the manager, the field and force_conflicts.
func requireConflictWarning(t *testing.T, when string, diags []*tfprotov6.Diagnostic, manager, field string) {
	t.Helper()
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityWarning && d.Summary == conflictWarning {
			for _, want := range []string{fmt.Sprintf("manager %q owns %s", manager, field), "force_conflicts = true", `cluster "west"`} {
				if !strings.Contains(d.Detail, want) {
					t.Errorf("%s: the warning lacks %q:\n%s", when, want, d.Detail)
				}
			}
			return
		}
	}
	t.Errorf("%s: no %q warning among the plan's diagnostics %v", when, conflictWarning, summaries(diags))
}

func summaries(diags []*tfprotov6.Diagnostic) []string {
	out := make([]string, 0, len(diags))
	for _, d := range diags {
		out = append(out, fmt.Sprintf("%s: %s", d.Severity, d.Summary))
	}
	return out
}

func planCheckConfig(t *testing.T, td, url, extra string) string {
	t.Helper()
	return acctest.ProviderConfig(t) + fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" "this" {
  cluster             = "west"
  trust_domain        = %q
  bundle_endpoint_url = %q
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = "spiffe://%s/spire/server"
  }
%s
}
`, td, url, td, extra)
}

// TestAccPlanApplyCheck_conflictWarning: another field manager takes
// spec.bundleEndpointURL of a ClusterFederatedTrustDomain this provider
// manages. The plan that sets it back warns, through a server-side apply dry
// run, that the apply will fail without force_conflicts; the apply does fail
// with "Field Manager Conflict"; with force_conflicts it succeeds and no
// longer warns.
func TestAccPlanApplyCheck_conflictWarning(t *testing.T) {
	td := acctest.UniqueName("conflict") + ".test"
	url := "https://spire." + td + ":8443"
	ctx := context.Background()
	dyn := acctest.Dynamic(t, "west")
	rec := &planRecorder{}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: rec.factories(),
		Steps: []resource.TestStep{
			{Config: planCheckConfig(t, td, url, "")},
			{
				PreConfig: func() {
					for _, d := range rec.take() {
						if d.Summary == conflictWarning {
							t.Errorf("creating and re-planning an object nobody else touched warned: %s", d.Detail)
						}
					}
					patch := []byte(`{"spec":{"bundleEndpointURL":"https://elsewhere.test"}}`)
					if _, err := dyn.Resource(cftdGVR).Patch(ctx, td, types.MergePatchType, patch,
						metav1.PatchOptions{FieldManager: "drift-editor"}); err != nil {
						t.Fatal(err)
					}
				},
				Config:             planCheckConfig(t, td, url, ""),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
			{
				PreConfig: func() {
					requireConflictWarning(t, "plan", rec.take(), "drift-editor", ".spec.bundleEndpointURL")
				},
				Config:      planCheckConfig(t, td, url, ""),
				ExpectError: regexp.MustCompile(`(?s)Field Manager Conflict.*drift-editor.*force_conflicts`),
			},
			{
				PreConfig: func() {
					requireConflictWarning(t, "apply", rec.take(), "drift-editor", ".spec.bundleEndpointURL")
				},
				Config: planCheckConfig(t, td, url, "  force_conflicts = true"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("zerotrust_federated_trust_domain.this", tfjsonpath.New("bundle_endpoint_url"), knownvalue.StringExact(url)),
				},
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction("zerotrust_federated_trust_domain.this", plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: func(*terraform.State) error {
					obj, err := getCFTD(t, "west", td)
					if err != nil {
						return err
					}
					if got, _, _ := unstructured.NestedString(obj.Object, "spec", "bundleEndpointURL"); got != url {
						return fmt.Errorf("spec.bundleEndpointURL = %q after a forced apply, want %q", got, url)
					}
					return nil
				},
			},
		},
		CheckDestroy: func(s *terraform.State) error {
			// force_conflicts = true takes the fields: its dry run meets no conflict.
			for _, d := range rec.take() {
				if d.Summary == conflictWarning {
					return fmt.Errorf("a plan with force_conflicts = true still warned: %s", d.Detail)
				}
			}
			return checkCFTDsGone(t, map[string]string{"west": td})(s)
		},
	})
}

// TestAccPlanApplyCheck_rejectedAtPlan: the cluster admits only bundle
// endpoints on hosts named spire.* (a ValidatingAdmissionPolicy, something
// no offline validation can know). A plan that changes the URL to another
// host fails at plan, naming the policy, the object and the cluster; the
// object is left as it was.
func TestAccPlanApplyCheck_rejectedAtPlan(t *testing.T) {
	td := acctest.UniqueName("rejected") + ".test"
	url := "https://spire." + td + ":8443"
	policyName := "zt-spire-hosts-" + strings.SplitN(td, ".", 2)[0]
	ctx := context.Background()

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: planCheckConfig(t, td, url, "")},
			{
				PreConfig: func() { installHostPolicy(ctx, t, policyName, td) },
				Config:    planCheckConfig(t, td, "https://rogue."+td+":8443", ""),
				PlanOnly:  true,
				ExpectError: regexp.MustCompile(`(?s)Error: Cluster Rejected the Object.*cluster "west".*ClusterFederatedTrustDomain.*` +
					regexp.QuoteMeta(td) + `.*` + regexp.QuoteMeta(policyName) + `.*denied.*dry`),
			},
			{
				// Nothing was written: the object still has the old URL, and the
				// unchanged configuration plans nothing.
				Config: planCheckConfig(t, td, url, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: checkCFTDSpec(t, "west", td, map[string]string{"bundleEndpointURL": url}),
			},
		},
		CheckDestroy: checkCFTDsGone(t, map[string]string{"west": td}),
	})
}

// installHostPolicy admits, for the one ClusterFederatedTrustDomain named
// name (so parallel tests on the shared cluster are not affected), only
// bundle endpoint URLs on a host spire.*, and waits until the API server
// enforces it.
func installHostPolicy(ctx context.Context, t *testing.T, policyName, name string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(acctest.Cluster(t, "west").RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	fail := admissionv1.Fail
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policyName},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule: admissionv1.Rule{APIGroups: []string{"spire.spiffe.io"}, APIVersions: []string{"v1alpha1"},
						Resources: []string{"clusterfederatedtrustdomains"}},
				},
			}}},
			MatchConditions: []admissionv1.MatchCondition{{Name: "this-test-only", Expression: fmt.Sprintf("object.metadata.name == %q", name)}},
			Validations: []admissionv1.Validation{{
				Expression: "object.spec.bundleEndpointURL.startsWith('https://spire.')",
				Message:    "bundle endpoints must be on a host named spire.*",
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policyName},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: policyName, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	api := cs.AdmissionregistrationV1()
	if _, err := api.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = api.ValidatingAdmissionPolicies().Delete(context.Background(), policyName, metav1.DeleteOptions{})
	})
	if _, err := api.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = api.ValidatingAdmissionPolicyBindings().Delete(context.Background(), policyName, metav1.DeleteOptions{})
	})

	// The policy takes effect once the API server's informers see it: probe
	// with a dry-run change until it is refused.
	dyn := acctest.Dynamic(t, "west")
	patch := []byte(`{"spec":{"bundleEndpointURL":"https://probe.invalid"}}`)
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := dyn.Resource(cftdGVR).Patch(ctx, name, types.MergePatchType, patch,
			metav1.PatchOptions{FieldManager: "policy-probe", DryRun: []string{metav1.DryRunAll}})
		if apierrors.IsInvalid(err) && strings.Contains(err.Error(), policyName) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ValidatingAdmissionPolicy %s is not enforced after a minute (last answer: %v)", policyName, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
