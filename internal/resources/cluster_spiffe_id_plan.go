package resources

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/template"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
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
		for i, text := range elementStrings(ctx, attr.value) {
			if _, err := renderTemplate(text, "td-one.invalid"); err != nil {
				validate.AttributeError(&resp.Diagnostics, path.Root(attr.name).AtListIndex(i), "Invalid Template", fmt.Sprintf("spire-controller-manager would refuse this template: %v. "+clusterSPIFFEIDTemplateText, err))
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
	obj, _ := labelSelectorToObject(ctx, v)
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

// clusterSPIFFEIDSample is data like spire-controller-manager renders a
// template with, so that a template the controller cannot execute fails at
// plan (a missing field is an execution error).
func clusterSPIFFEIDSample(td string) any {
	return struct {
		TrustDomain, ClusterName, ClusterDomain string
		PodMeta                                 *metav1.ObjectMeta
		PodSpec                                 *corev1.PodSpec
		NodeMeta                                *metav1.ObjectMeta
		NodeSpec                                *corev1.NodeSpec
	}{
		TrustDomain: td, ClusterName: "cluster", ClusterDomain: "cluster.local",
		PodMeta:  &metav1.ObjectMeta{Name: "pod", Namespace: "ns", UID: "uid", Labels: map[string]string{}, Annotations: map[string]string{}},
		PodSpec:  &corev1.PodSpec{ServiceAccountName: "sa", NodeName: "node"},
		NodeMeta: &metav1.ObjectMeta{Name: "node", UID: "node-uid", Labels: map[string]string{}, Annotations: map[string]string{}},
		NodeSpec: &corev1.NodeSpec{},
	}
}

func renderTemplate(text, td string) (string, error) {
	tmpl, err := template.New("template").Parse(text)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, clusterSPIFFEIDSample(td)); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// samplesOnlyFail: a template that looks up labels or annotations may
// render an invalid ID only because the sample pod carries none, so only a
// parse or execution error is held against it.
func samplesOnlyFail(text string, err error) bool {
	var notID errNotSPIFFEID
	return errors.As(err, &notID) && (strings.Contains(text, "Labels") || strings.Contains(text, "Annotations"))
}

// errNotSPIFFEID is a rendered template that is not a SPIFFE ID.
type errNotSPIFFEID struct {
	rendered string
	err      error
}

func (e errNotSPIFFEID) Error() string {
	return fmt.Sprintf("it renders %q, which is not a SPIFFE ID (%v)", e.rendered, e.err)
}

// renderSPIFFEIDTemplate renders the template for a cluster of trust domain
// td and parses the result as a SPIFFE ID.
func renderSPIFFEIDTemplate(text, td string) (spiffeid.ID, error) {
	out, err := renderTemplate(text, td)
	if err != nil {
		return spiffeid.ID{}, err
	}
	id, err := spiffeid.FromString(out)
	if err != nil {
		return spiffeid.ID{}, errNotSPIFFEID{rendered: out, err: err}
	}
	return id, nil
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
		if found := elementStrings(ctx, state.FederationProblems); len(found) > 0 {
			resp.Diagnostics.AddAttributeWarning(path.Root("federation_problems"), "Workloads Do Not Federate",
				fmt.Sprintf("The last refresh found that the workloads of ClusterSPIFFEID %q do not federate as it "+
					"declares: %s. The apply waits until they do; it cannot fix a missing federation or a template that "+
					"fails to render.", plan.Name.ValueString(), strings.Join(found, "; ")))
		}
	}
	plan.FederationProblems = types.ListValueMust(types.StringType, nil)
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
	checkWorkloadFederation(ctx, r.Data, plan.Cluster, plan.FederatesWith, plan.SPIFFEIDTemplate, &resp.Diagnostics)
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

// checkWorkloadFederation makes the plan-time checks that ask the cluster:
// the SPIFFE ID template (when given) renders an ID of the cluster's trust
// domain, the entries do not federate with it, and every federates_with
// trust domain is declared by a federation of the cluster, existing or
// planned earlier in this run.
func checkWorkloadFederation(ctx context.Context, data *providerdata.Data, cluster types.String, federatesWith types.Set,
	template types.String, diags *diag.Diagnostics) {
	tds := elementStrings(ctx, federatesWith)
	if federatesWith.IsUnknown() || cluster.IsUnknown() {
		return
	}
	client := planClient(ctx, data, cluster, diags)
	if client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, planLookupTimeout)
	defer cancel()
	if facts, err := spirefacts.Lookup(ctx, client); err == nil && facts.Found() {
		if own, _ := facts.TrustDomain(); own != "" {
			checkOwnTrustDomain(template, own, tds, client.DisplayName(), diags)
		}
	}
	if len(tds) == 0 {
		return
	}
	declared := plannedFederationsOf(data).of(cluster.ValueString())
	items, err := client.ListOnce(ctx, kube.ClusterFederatedTrustDomain)
	if err != nil {
		return // the apply's wait names what is missing
	}
	for _, item := range items {
		td, _, _ := unstructured.NestedString(item.Object, "spec", "trustDomain")
		declared = append(declared, td)
	}
	for _, td := range tds {
		if !slices.Contains(declared, td) {
			validate.AttributeError(diags, path.Root("federates_with"), "Trust Domain Not Federated", fmt.Sprintf("Cluster %q has no federation with %q: no ClusterFederatedTrustDomain on the cluster declares it, and "+
				"none is planned before this resource in this run. SPIRE refuses entries that federate with a trust "+
				"domain whose bundle it does not hold, so the workloads would never federate. Declare it "+
				"(zerotrust_federated_trust_domain, federates_with of zerotrust_spire_federation, or zerotrust_spire_bundle) and make this "+
				"resource depend on it, or remove %q from federates_with.", client.DisplayName(), td, td))
		}
	}
}

// checkOwnTrustDomain: the template must render an ID of the cluster's own
// trust domain, and federating with that trust domain is refused.
func checkOwnTrustDomain(template types.String, own string, tds []string, clusterName string, diags *diag.Diagnostics) {
	if slices.Contains(tds, own) {
		validate.AttributeError(diags, path.Root("federates_with"), "Federation With the Own Trust Domain", fmt.Sprintf("%q is the trust domain of cluster %q itself; federates_with lists peers only.", own, clusterName))
	}
	if template.IsNull() || template.IsUnknown() {
		return
	}
	id, err := renderSPIFFEIDTemplate(template.ValueString(), own)
	if err == nil && id.TrustDomain().Name() != own {
		validate.AttributeError(diags, path.Root("spiffe_id_template"), "SPIFFE ID Outside the Cluster's Trust Domain", fmt.Sprintf("The template renders %s, but cluster %q is trust domain %q: spire-controller-manager refuses to render "+
			"such an entry. Use {{ .TrustDomain }} for the trust domain.", id, clusterName, own))
	}
}
