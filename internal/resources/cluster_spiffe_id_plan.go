package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/clusterspiffeid"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// ValidateConfig refuses what spire-controller-manager would refuse without
// asking the cluster: templates that do not parse or cannot render, a
// SPIFFE ID template that renders no SPIFFE ID, and selector expressions
// whose values do not fit their operator.
func (r *clusterSPIFFEIDResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m clusterSPIFFEIDResourceModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !m.SPIFFEIDTemplate.IsNull() && !m.SPIFFEIDTemplate.IsUnknown() {
		if _, err := renderSPIFFEIDTemplate(m.SPIFFEIDTemplate.ValueString(), "td-one.invalid"); err != nil && !samplesOnlyFail(m.SPIFFEIDTemplate.ValueString(), err) {
			validate.AttributeError(&resp.Diagnostics, path.Root("spiffe_id_template"), "Invalid SPIFFE ID Template", fmt.Sprintf("spire-controller-manager could not make a SPIFFE ID of this template: %v. Write a Go template that "+
				"renders `spiffe://<trust domain>/<path>`, such as "+
				"`spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}`.", err))
		}
	}
	for _, attr := range []struct {
		name  string
		value types.List
	}{{"dns_name_templates", m.DNSNameTemplates}, {"workload_selector_templates", m.WorkloadSelectorTemplates}} {
		texts := stringsOf(attr.value)
		if len(texts) != len(attr.value.Elements()) {
			// An element unknown until apply would shift the indices the
			// errors name; the list is checked once it is all known.
			continue
		}
		for i, text := range texts {
			if _, err := renderTemplate(text, "td-one.invalid"); err != nil {
				validate.AttributeError(&resp.Diagnostics, path.Root(attr.name).AtListIndex(i), "Invalid Template", fmt.Sprintf("spire-controller-manager would refuse this template: %v. "+clusterspiffeid.TemplateText, err))
			}
		}
	}
	for _, sel := range []string{"pod_selector", "namespace_selector"} {
		var v types.Object
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(sel), &v)...)
		validateSelectorExpressions(ctx, v, path.Root(sel), &resp.Diagnostics)
	}
}

// validateSelectorExpressions: In and NotIn need values, Exists and
// DoesNotExist take none (metav1.LabelSelectorAsSelector refuses otherwise).
func validateSelectorExpressions(ctx context.Context, v types.Object, at path.Path, diags *diag.Diagnostics) {
	obj, _ := clusterspiffeid.SelectorToObject(ctx, v)
	exprs, _ := obj["matchExpressions"].([]any)
	for i, e := range exprs {
		item, _ := e.(map[string]any)
		op, values := objText(item["operator"]), objStrings(item, "values")
		if op == "" || item["key"] == "" {
			continue
		}
		needs := op == "In" || op == "NotIn"
		if needs == (len(values) == 0) {
			want := "at least one value"
			if !needs {
				want = "no values"
			}
			validate.AttributeError(diags, at.AtName("match_expressions").AtListIndex(i).AtName("values"),
				"Invalid Label Selector Requirement", fmt.Sprintf("Operator %s takes %s.", op, want))
		}
	}
}

// samplesOnlyFail: a template that looks up labels or annotations may
// render an invalid ID only because the sample pod carries none, so only a
// parse or execution error is held against it.
func samplesOnlyFail(text string, err error) bool {
	var notID errNotSPIFFEID
	return errors.As(err, &notID) && (strings.Contains(text, "Labels") || strings.Contains(text, "Annotations"))
}

// ModifyPlan derives the id and class name, plans federation_problems
// empty (the apply waits until it is), and checks against the cluster what
// the configuration alone cannot show.
func (r *clusterSPIFFEIDResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.Data == nil {
		return
	}
	var plan, config clusterSPIFFEIDResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() || !r.Data.CheckCluster(plan.Cluster, path.Root("cluster"), &resp.Diagnostics) {
		return
	}
	if plan.Cluster.IsUnknown() || plan.Name.IsUnknown() {
		plan.ID = types.StringUnknown()
	} else {
		plan.ID = types.StringValue(resourceID(plan.Cluster, plan.Name.ValueString()))
	}
	if config.ClassName.IsNull() && plan.ClassName.IsUnknown() {
		plan.ClassName = types.StringValue(r.Data.SpireClassName)
	}
	if !req.State.Raw.IsNull() {
		var state clusterSPIFFEIDResourceModel
		resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
		if found := stringsOf(state.FederationProblems); len(found) > 0 {
			resp.Diagnostics.AddAttributeWarning(path.Root("federation_problems"), "Workloads Do Not Federate",
				fmt.Sprintf("The last refresh found that the workloads of ClusterSPIFFEID %q do not federate as it "+
					"declares: %s. The apply waits until they do; it cannot fix a missing federation or a template that "+
					"fails to render.", plan.Name.ValueString(), strings.Join(found, "; ")))
		}
	}
	plan.FederationProblems = types.ListValueMust(types.StringType, nil)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	checkWorkloadFederation(ctx, r.Data, plan.Cluster, plan.FederatesWith, plan.SPIFFEIDTemplate, plan.SpireServer, &resp.Diagnostics)
	var stateClass types.String
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("class_name"), &stateClass)...)
	}
	if !plan.ClassName.Equal(stateClass) {
		checkClassServed(ctx, r.Data, plan.Cluster, plan.ClassName, &resp.Diagnostics)
	}
}

// checkClassServed warns when class, planned for a new object or a changed
// class_name, is not the provider's spire.class_name and nothing shows
// that a controller serves it: spire-controller-manager ignores objects of
// another class, so their workloads get no entries and the apply waits out
// its timeout. The evidence is a ClusterSPIFFEID of that class whose
// status.stats a controller wrote. The provider's class is trusted as
// stated; a cluster that cannot be listed gives no warning.
func checkClassServed(ctx context.Context, data *providerdata.Data, cluster, class types.String, diags *diag.Diagnostics) {
	if class.IsUnknown() || class.IsNull() || cluster.IsUnknown() || class.ValueString() == data.SpireClassName {
		return
	}
	client := planClient(ctx, data, cluster, diags)
	if client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, planLookupTimeout)
	defer cancel()
	items, err := client.ListOnce(ctx, kube.ClusterSPIFFEID)
	if err != nil {
		return
	}
	for _, item := range items {
		c, _, _ := unstructured.NestedString(item.Object, "spec", "className")
		if _, rendered, _ := unstructured.NestedMap(item.Object, "status", "stats"); rendered && c == class.ValueString() {
			return
		}
	}
	name := fmt.Sprintf("%q", class.ValueString())
	if class.ValueString() == "" {
		name = "none (no spec.className)"
	}
	provider := fmt.Sprintf("%q", data.SpireClassName)
	if data.SpireClassName == "" {
		provider = "unset"
	}
	diags.AddAttributeWarning(path.Root("class_name"), "No Controller Known to Serve This Class",
		fmt.Sprintf("The class of this ClusterSPIFFEID is %s, but the provider's spire.class_name is %s, and no "+
			"ClusterSPIFFEID of that class on cluster %q has been rendered by a spire-controller-manager (status.stats). "+
			"A controller ignores objects of another class than its own (its className; class-less objects only with "+
			"watchClassless), so unless one serves this class, the selected workloads get no entries and the apply "+
			"waits until its timeout. Set class_name to the class the cluster's controller serves, or leave it unset "+
			"to use the provider's.", name, provider, client.DisplayName()))
}
