package resources_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

var rfc3339 = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

// createAsWebhook creates a DomainVerification for domain the way Kuadrant's
// ingress webhook does (another field manager, only spec.domain, a name of
// its own), waits for the stand-in controller's token, and deletes the
// object when the test ends: destroy leaves an adopted object in place.
func createAsWebhook(t *testing.T, cluster string, kind kube.Kind, name, domain string) *unstructured.Unstructured {
	t.Helper()
	obj := createAsOther(t, cluster, kind.GVR(), map[string]any{
		"apiVersion": kind.APIVersion(), "kind": "DomainVerification",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"domain": domain},
	})
	t.Cleanup(func() {
		_ = acctest.Dynamic(t, cluster).Resource(kind.GVR()).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	deadline := time.Now().Add(60 * time.Second)
	for dvStatus(t, cluster, kind.Version, name).Token == "" {
		if time.Now().After(deadline) {
			t.Fatalf("%s: DomainVerification %s has no token after 60s", cluster, name)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return obj
}

// checkLeftInPlace is the CheckDestroy of an adopted object: it is still
// there, untouched by the provider.
func checkLeftInPlace(t *testing.T, cluster string, gvr schema.GroupVersionResource, created *unstructured.Unstructured) resource.TestCheckFunc {
	untouched := checkUntouched(t, cluster, gvr, created)
	return func(s *terraform.State) error {
		if _, err := getDV(t, cluster, domainverification.V1, created.GetName()); apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: destroy deleted the adopted DomainVerification %s", cluster, created.GetName())
		}
		return untouched(s)
	}
}

// TestAccDomainVerification_adoptWebhookCreated is the flow of Kuadrant's
// custom-domain design: the
// ingress webhook created the object (under a name of its own) and only the
// controller may change it. Without adopt_existing the plan refuses it; with
// it, the plan shows the object adopted under its own name, the apply writes
// nothing, the controller's verdict is read, and destroy leaves the object.
func TestAccDomainVerification_adoptWebhookCreated(t *testing.T) {
	const cluster = acctest.East
	acctest.DomainVerificationController(t, cluster)
	id := acctest.UniqueName("adopt")
	domain, name := id+"."+acctest.DNSZone, "webhook-"+id
	created := createAsWebhook(t, cluster, kube.DomainVerificationV1, name, domain)
	gvr := kube.DomainVerificationV1.GVR()
	adopt := dvConfig(t, fmt.Sprintf("  domain         = %q\n  adopt_existing = true", domain))

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkLeftInPlace(t, cluster, gvr, created),
		Steps: []resource.TestStep{
			{
				Config:      dvConfig(t, fmt.Sprintf("  name   = %q\n  domain = %q", name, domain)),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Object Already Exists.*` + regexp.QuoteMeta(name) + `.*adopt_existing = true`),
			},
			{
				Config: adopt,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction(dvAddr, plancheck.ResourceActionCreate),
						plancheck.ExpectKnownValue(dvAddr, tfjsonpath.New("adopted"), knownvalue.Bool(true)),
						plancheck.ExpectKnownValue(dvAddr, tfjsonpath.New("name"), knownvalue.StringExact(name)),
						plancheck.ExpectKnownValue(dvAddr, tfjsonpath.New("id"), knownvalue.StringExact(name)),
					},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("adopted"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("token"), sameTokenOnCluster(t, cluster, domainverification.V1, name)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("verified"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("next_verification"), knownvalue.StringRegexp(rfc3339)),
				},
				Check: checkUntouched(t, cluster, gvr, created),
			},
			{
				PreConfig: func() {
					if err := acctest.DNS(t).AddTXT(acctest.DNSZone, domain, dvStatus(t, cluster, domainverification.V1, name).Token); err != nil {
						t.Fatal(err)
					}
					waitVerified(t, cluster, domainverification.V1, name, true)
				},
				Config: adopt,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("verified"), knownvalue.Bool(true)),
				},
				Check: checkUntouched(t, cluster, gvr, created),
			},
			{
				// The API version changes in place, and still nothing is written.
				Config: dvConfig(t, fmt.Sprintf("  domain         = %q\n  adopt_existing = true\n  api_version    = \"v1alpha1\"", domain)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectResourceAction(dvAddr, plancheck.ResourceActionUpdate)},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("api_version"), knownvalue.StringExact(domainverification.V1Alpha1)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("name"), knownvalue.StringExact(name)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("adopted"), knownvalue.Bool(true)),
				},
				Check: checkUntouched(t, cluster, gvr, created),
			},
		},
	})
}

// TestAccDomainVerification_adoptExistingCreatesWhenAbsent: with
// adopt_existing and no object yet, the plan leaves adopted to the apply,
// which creates the object as without the setting, and destroy deletes it.
func TestAccDomainVerification_adoptExistingCreatesWhenAbsent(t *testing.T) {
	acctest.DomainVerificationController(t, acctest.East)
	domain := acctest.UniqueName("adoptnew") + "." + acctest.DNSZone
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkDVGone(t, acctest.East, domain),
		Steps: []resource.TestStep{{
			Config: dvConfig(t, fmt.Sprintf("  domain         = %q\n  adopt_existing = true", domain)),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(dvAddr, tfjsonpath.New("adopted")),
					plancheck.ExpectKnownValue(dvAddr, tfjsonpath.New("name"), knownvalue.StringExact(domain)),
				},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("adopted"), knownvalue.Bool(false)),
				statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("token"), knownvalue.StringRegexp(tokenPattern)),
			},
		}},
	})
}

// prependVerifiedCondition puts a Verified condition for another domain in
// front of the object's conditions, as the v1alpha1 example of Kuadrant's
// custom-domain design lists
// one per domain; the stand-in controller keeps it (it only rewrites the
// condition of spec.domain).
func prependVerifiedCondition(t *testing.T, cluster, name, domain string) {
	t.Helper()
	ri := acctest.Dynamic(t, cluster).Resource(kube.DomainVerificationV1Alpha1.GVR())
	for attempt := 0; ; attempt++ {
		obj, err := ri.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		now := time.Now().UTC().Format(time.RFC3339)
		other := map[string]any{"type": domainverification.ConditionVerified, "domain": domain, "status": "True",
			"reason": "Verified", "message": "another domain, verified", "lastTransitionTime": now, "nextVerification": now}
		if err := unstructured.SetNestedSlice(obj.Object, append([]any{other}, conds...), "status", "conditions"); err != nil {
			t.Fatal(err)
		}
		_, err = ri.UpdateStatus(context.Background(), obj, metav1.UpdateOptions{FieldManager: "kuadrant-standin"})
		if err == nil {
			return
		}
		if !apierrors.IsConflict(err) || attempt > 20 {
			t.Fatalf("%s: add a condition to DomainVerification %s: %v", cluster, name, err)
		}
	}
}

// TestAccDomainVerification_v1alpha1ConditionPerDomain: the v1alpha1 status
// lists a Verified condition per domain; the first one, about another domain,
// is True, while the one for this domain is False until the TXT record is
// published. The resource reads the condition of its own domain.
func TestAccDomainVerification_v1alpha1ConditionPerDomain(t *testing.T) {
	const cluster = acctest.West
	acctest.DomainVerificationController(t, cluster)
	id := acctest.UniqueName("perdom")
	domain, other := id+"."+acctest.DNSZone, "other-"+id+".example.com"
	config := dvConfig(t, fmt.Sprintf("  cluster     = %q\n  domain      = %q\n  api_version = \"v1alpha1\"", cluster, domain))
	conditions := func(want int) resource.TestCheckFunc {
		return func(*terraform.State) error {
			obj, err := getDV(t, cluster, domainverification.V1Alpha1, domain)
			if err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
			if len(conds) != want || domainverification.VerifiedCondition(obj, other) == nil {
				return fmt.Errorf("want %d Verified conditions, one for %s: %v", want, other, conds)
			}
			return nil
		}
	}

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: acctest.ProtoV6ProviderFactories,
		CheckDestroy:             checkDVGone(t, cluster, domain),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("adopted"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("verified"), knownvalue.Bool(false)),
				},
			},
			{
				PreConfig: func() { prependVerifiedCondition(t, cluster, domain, other) },
				Config:    config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					// The first Verified condition says True, for the other domain.
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("verified"), knownvalue.Bool(false)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("message"), knownvalue.StringRegexp(regexp.MustCompile(`TXT|publish`))),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("next_verification"), knownvalue.StringRegexp(rfc3339)),
				},
				Check: conditions(2),
			},
			{
				PreConfig: func() {
					if err := acctest.DNS(t).AddTXT(acctest.DNSZone, domain, dvStatus(t, cluster, domainverification.V1Alpha1, domain).Token); err != nil {
						t.Fatal(err)
					}
					waitVerified(t, cluster, domainverification.V1Alpha1, domain, true)
				},
				Config: config,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("verified"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(dvAddr, tfjsonpath.New("message"), knownvalue.StringExact("TXT record found on every authoritative server")),
				},
				Check: conditions(2),
			},
		},
	})
}
