package clusterspiffeid

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"text/template"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/spiffe/go-spiffe/v2/spiffeid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// What spire-controller-manager refuses of a ClusterSPIFFEID's spec by
// itself, without the cluster: templates it cannot parse or execute, a
// SPIFFE ID template that renders no SPIFFE ID, and label selector
// requirements whose values do not fit their operator.

// sample is data like spire-controller-manager renders a template with, so
// that a template the controller cannot execute fails at plan (a missing
// field is an execution error).
func sample(td string) any {
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

// RenderTemplate renders text as spire-controller-manager would for a pod
// of a cluster of trust domain td.
func RenderTemplate(text, td string) (string, error) {
	tmpl, err := template.New("template").Parse(text)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, sample(td)); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// errNotSPIFFEID is a rendered template that is not a SPIFFE ID.
type errNotSPIFFEID struct {
	rendered string
	err      error
}

func (e errNotSPIFFEID) Error() string {
	return fmt.Sprintf("it renders %q, which is not a SPIFFE ID (%v)", e.rendered, e.err)
}

// RenderSPIFFEID renders a SPIFFE ID template for a cluster of trust
// domain td and parses the result as a SPIFFE ID.
func RenderSPIFFEID(text, td string) (spiffeid.ID, error) {
	out, err := RenderTemplate(text, td)
	if err != nil {
		return spiffeid.ID{}, err
	}
	id, err := spiffeid.FromString(out)
	if err != nil {
		return spiffeid.ID{}, errNotSPIFFEID{rendered: out, err: err}
	}
	return id, nil
}

// samplesOnlyFail: a template that looks up labels or annotations may
// render an invalid ID only because the sample pod carries none, so only a
// parse or execution error is held against it.
func samplesOnlyFail(text string, err error) bool {
	var notID errNotSPIFFEID
	return errors.As(err, &notID) && (strings.Contains(text, "Labels") || strings.Contains(text, "Annotations"))
}

// Validate is what the controller would refuse of s, as errors on the
// attributes that hold it; values unknown until apply are left out.
func Validate(ctx context.Context, s Spec) diag.Diagnostics {
	var diags diag.Diagnostics
	if !s.SPIFFEIDTemplate.IsNull() && !s.SPIFFEIDTemplate.IsUnknown() {
		if _, err := RenderSPIFFEID(s.SPIFFEIDTemplate.ValueString(), "td-one.invalid"); err != nil && !samplesOnlyFail(s.SPIFFEIDTemplate.ValueString(), err) {
			validate.AttributeError(&diags, path.Root("spiffe_id_template"), "Invalid SPIFFE ID Template", fmt.Sprintf("spire-controller-manager could not make a SPIFFE ID of this template: %v. Write a Go template that "+
				"renders `spiffe://<trust domain>/<path>`, such as "+
				"`spiffe://{{ .TrustDomain }}/ns/{{ .PodMeta.Namespace }}/sa/{{ .PodSpec.ServiceAccountName }}`.", err))
		}
	}
	for _, attr := range []struct {
		name  string
		value types.List
	}{{"dns_name_templates", s.DNSNameTemplates}, {"workload_selector_templates", s.WorkloadSelectorTemplates}} {
		texts := providerdata.Strings(attr.value)
		if len(texts) != len(attr.value.Elements()) {
			// An element unknown until apply would shift the indices the
			// errors name; the list is checked once it is all known.
			continue
		}
		for i, text := range texts {
			if _, err := RenderTemplate(text, "td-one.invalid"); err != nil {
				validate.AttributeError(&diags, path.Root(attr.name).AtListIndex(i), "Invalid Template", fmt.Sprintf("spire-controller-manager would refuse this template: %v. "+TemplateText, err))
			}
		}
	}
	validateSelectorExpressions(ctx, s.PodSelector, path.Root("pod_selector"), &diags)
	validateSelectorExpressions(ctx, s.NamespaceSelector, path.Root("namespace_selector"), &diags)
	return diags
}

// validateSelectorExpressions: In and NotIn need values, Exists and
// DoesNotExist take none (metav1.LabelSelectorAsSelector refuses otherwise).
func validateSelectorExpressions(ctx context.Context, v types.Object, at path.Path, diags *diag.Diagnostics) {
	obj, _ := SelectorToObject(ctx, v)
	exprs, _ := obj["matchExpressions"].([]any)
	for i, e := range exprs {
		item, _ := e.(map[string]any)
		op, values := providerdata.FieldText(item["operator"]), providerdata.FieldStrings(item, "values")
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
