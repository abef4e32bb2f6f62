package resources

// The IstioCSR's plan-time cluster checks: what the operator would refuse at
// reconcile time, asked of the cluster before the apply starts.

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// istioCSRIssuerReadTimeout bounds the plan-time lookups: planning must not
// wait on a slow cluster.
const istioCSRIssuerReadTimeout = 5 * time.Second

// istioCSRPlanned is what the plan-time cluster checks read from the plan;
// a value the plan does not know yet is null here.
type istioCSRPlanned struct {
	namespace, istioNS, issuerName, issuerKind string
	caCert                                     *istioCSRCACertificateModel
}

// replacesIstioCSR reports whether the plan creates the object or replaces
// it: the state is null, or a value that cannot change on the object
// changes (see the schema's RequiresReplace modifiers; the resource's
// ModifyPlan does not see their verdict).
func replacesIstioCSR(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) bool {
	if req.State.Raw.IsNull() {
		return true
	}
	tls, ref := path.Root("istiod_tls"), path.Root("cert_manager").AtName("issuer_ref")
	for _, p := range []path.Path{path.Root("namespace"), path.Root("istio").AtName("namespace"), ref.AtName("name"), ref.AtName("kind"), ref.AtName("group")} {
		var before, after types.String
		if req.State.GetAttribute(ctx, p, &before).HasError() || resp.Plan.GetAttribute(ctx, p, &after).HasError() || !before.Equal(after) {
			return true
		}
	}
	var algBefore, algAfter types.String
	if req.State.GetAttribute(ctx, tls.AtName("private_key_algorithm"), &algBefore).HasError() ||
		resp.Plan.GetAttribute(ctx, tls.AtName("private_key_algorithm"), &algAfter).HasError() ||
		(algBefore.ValueString() != "" && !algBefore.Equal(algAfter)) {
		return true
	}
	for _, p := range []path.Path{tls.AtName("private_key_size"), path.Root("server").AtName("port")} {
		var before, after types.Int64
		if req.State.GetAttribute(ctx, p, &before).HasError() || resp.Plan.GetAttribute(ctx, p, &after).HasError() ||
			(before.ValueInt64() != 0 && !before.Equal(after)) {
			return true
		}
	}
	return false
}

// checkIstioCSRCluster asks the cluster, at plan time, about what the
// operator would refuse at reconcile time and never retry, or retry
// forever: another IstioCSR in the cluster, an ACME issuer, a missing or
// unusable istio_ca_certificate ConfigMap, a CA issuer whose secret is not
// where the operator reads it. Another IstioCSR and an ACME issuer are
// errors: the apply could only end rejected or Degraded. The CA ConfigMap
// and the issuer's CA Secret are warnings: an earlier resource of the same
// apply may create or fill them, which a plan cannot see, so
// refuseUnusableIstioCA asks again at apply, before anything is written,
// and refuses there with the same words. A missing issuer stays a warning:
// the operator retries it, and cert-manager or the issuer may be created by
// the same apply. It asks only when the cluster's connection and the values
// are known, within istioCSRIssuerReadTimeout, and stays silent when the
// cluster cannot answer (unreachable, no permission, CRD not served): the
// apply and the operator then speak for themselves. The checks of a
// reference that cannot change run only when the plan creates or replaces
// the object.
func (r *istioCSRResource) checkIstioCSRCluster(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse, cluster types.String) {
	if cluster.IsUnknown() || r.Data.Clusters == nil || r.Data.Clusters.IsUnknown(providerdata.ClusterKey(cluster)) {
		return
	}
	refPath, istioNSPath := path.Root("cert_manager").AtName("issuer_ref"), path.Root("istio").AtName("namespace")
	caPath := path.Root("cert_manager").AtName("istio_ca_certificate")
	var planned istioCSRPlanned
	for _, a := range []struct {
		p path.Path
		v *string
	}{{path.Root("namespace"), &planned.namespace}, {refPath.AtName("name"), &planned.issuerName},
		{refPath.AtName("kind"), &planned.issuerKind}, {istioNSPath, &planned.istioNS}} {
		var v types.String
		if resp.Plan.GetAttribute(ctx, a.p, &v).HasError() || v.IsNull() || v.IsUnknown() {
			return
		}
		*a.v = v.ValueString()
	}
	var ca types.Object
	if resp.Plan.GetAttribute(ctx, caPath, &ca).HasError() || ca.IsUnknown() {
		return
	}
	var caDiags diag.Diagnostics
	if model, ok := objectAs[istioCSRCACertificateModel](ctx, ca, &caDiags); ok {
		if model.Name.IsUnknown() || model.Key.IsUnknown() || model.Namespace.IsUnknown() {
			return
		}
		planned.caCert = &model
	}
	replacing := replacesIstioCSR(ctx, req, resp)
	caChanged := replacing
	if !replacing {
		var prior types.Object
		caChanged = req.State.GetAttribute(ctx, caPath, &prior).HasError() || !prior.Equal(ca)
	}
	if !replacing && !caChanged {
		return
	}
	ctx, client, cancel := planLookup(ctx, r.Data, cluster, istioCSRIssuerReadTimeout, &resp.Diagnostics)
	defer cancel()
	if client == nil {
		return
	}
	if served, err := client.Served(ctx, kube.IstioCSR); err != nil || !served {
		return // the apply reports the missing CRD
	}
	var caFound diag.Diagnostics
	if replacing {
		refuseOtherIstioCSR(ctx, client, planned.namespace, replacedNamespace(ctx, req), &resp.Diagnostics)
		checkIstioCSRIssuer(ctx, client, planned, false, &resp.Diagnostics, &caFound)
	}
	if caChanged && planned.caCert != nil {
		checkIstioCACertificate(ctx, client, planned, &caFound)
	}
	warnAtPlan(caFound, istioCSRCheckedAtApply, &resp.Diagnostics)
}

// istioCSRCheckedAtApply ends each CA check's plan warning.
const istioCSRCheckedAtApply = "This is a warning at plan because an earlier resource of the same apply may create or " +
	"change it; the apply asks again before it writes the IstioCSR, and refuses with this message if it still finds this."

// plannedOf is what the CA checks read from a plan at apply; ok is false
// when a value they need is missing.
func (m *istioCSRResourceModel) plannedOf(ctx context.Context) (istioCSRPlanned, bool) {
	var diags diag.Diagnostics
	planned := istioCSRPlanned{namespace: m.Namespace.ValueString()}
	cm, ok := objectAs[istioCSRCertManagerModel](ctx, m.CertManager, &diags)
	if !ok {
		return planned, false
	}
	ref, ok := objectAs[istioCSRIssuerRefModel](ctx, cm.IssuerRef, &diags)
	if !ok {
		return planned, false
	}
	planned.issuerName, planned.issuerKind = ref.Name.ValueString(), ref.Kind.ValueString()
	if istio, ok := objectAs[istioCSRIstioModel](ctx, m.Istio, &diags); ok {
		planned.istioNS = istio.Namespace.ValueString()
	}
	if ca, ok := objectAs[istioCSRCACertificateModel](ctx, cm.IstioCACertificate, &diags); ok {
		planned.caCert = &ca
	}
	return planned, planned.istioNS != "" && !diags.HasError()
}

// refuseUnusableIstioCA runs, at apply and before the IstioCSR is written,
// the checks the plan could only warn about (checkIstioCSRCluster): the
// issuer's CA Secret and an ACME issuer when the object is created
// (withIssuer), the istio_ca_certificate ConfigMap when it is set. Each
// finding is an error with the plan's words; what cannot be asked, and a
// missing issuer (the operator retries it, and the apply's wait names it),
// add nothing.
func refuseUnusableIstioCA(ctx context.Context, client *kube.Client, m *istioCSRResourceModel, withIssuer bool, diags *diag.Diagnostics) {
	planned, ok := m.plannedOf(ctx)
	if !ok {
		return
	}
	var found diag.Diagnostics
	if withIssuer {
		checkIstioCSRIssuer(ctx, client, planned, true, &found, &found)
	}
	if planned.caCert != nil {
		checkIstioCACertificate(ctx, client, planned, &found)
	}
	for _, d := range found {
		if d.Severity() == diag.SeverityError {
			diags.Append(d)
		}
	}
}

// istioCACertificateChanged reports whether an update changes
// cert_manager.istio_ca_certificate (the plan checks it only then).
func istioCACertificateChanged(ctx context.Context, state, plan *istioCSRResourceModel) bool {
	var diags diag.Diagnostics
	before, _ := objectAs[istioCSRCertManagerModel](ctx, state.CertManager, &diags)
	after, _ := objectAs[istioCSRCertManagerModel](ctx, plan.CertManager, &diags)
	return !before.IstioCACertificate.Equal(after.IstioCACertificate)
}

// istioCSRPrivateReplaces is the private-state key, in a plan only, that
// carries the namespace of the object a replacement deletes first.
const istioCSRPrivateReplaces = "replaces_namespace"

// recordReplacedNamespace keeps, for the second plan Terraform asks for a
// replacement (with a null prior state, but the first plan's private
// state), which namespace's IstioCSR goes away first, so the check for
// another IstioCSR does not count it.
func recordReplacedNamespace(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.State.Raw.IsNull() {
		return
	}
	var value []byte
	var ns types.String
	if replacesIstioCSR(ctx, req, resp) && !req.State.GetAttribute(ctx, path.Root("namespace"), &ns).HasError() {
		value, _ = json.Marshal(ns.ValueString())
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, istioCSRPrivateReplaces, value)...)
}

// replacedNamespace is the namespace recordReplacedNamespace kept ("" when
// none): from the prior state, or in the second plan of a replacement
// from the private state.
func replacedNamespace(ctx context.Context, req resource.ModifyPlanRequest) string {
	var ns types.String
	if !req.State.Raw.IsNull() {
		_ = req.State.GetAttribute(ctx, path.Root("namespace"), &ns)
		return ns.ValueString()
	}
	if req.Private == nil {
		return ""
	}
	data, _ := req.Private.GetKey(ctx, istioCSRPrivateReplaces)
	var out string
	if len(data) == 0 || json.Unmarshal(data, &out) != nil {
		return ""
	}
	return out
}

// refuseOtherIstioCSR mirrors utils.go disallowMultipleIstioCSRInstances:
// the operator serves only the oldest IstioCSR of the cluster and rejects
// every newer one for good. The object in ns (replaced in place) and the
// one in priorNS (deleted before the new one is created) do not count; one
// being deleted does not either (the operator lets it go at once).
func refuseOtherIstioCSR(ctx context.Context, client *kube.Client, ns, priorNS string, diags *diag.Diagnostics) {
	items, err := client.List(ctx, kube.IstioCSR, "")
	if err != nil {
		if d, ok := kube.NotCheckedWarning(err, "that no other IstioCSR exists on the cluster (the operator serves one)"); ok {
			diags.Append(d)
		}
		return
	}
	for _, item := range items {
		if item.GetNamespace() == ns || item.GetNamespace() == priorNS || item.GetDeletionTimestamp() != nil {
			continue
		}
		validate.AttributeError(diags, path.Root("namespace"), "Another IstioCSR Exists", fmt.Sprintf(
			"Cluster %q already has the IstioCSR %s/%s. The cert-manager Operator serves only the oldest IstioCSR of a "+
				"cluster (utils.go disallowMultipleIstioCSRInstances): it would reject this one for good (annotation %s, "+
				"never removed) and the apply would fail. Manage the existing IstioCSR (import it), or delete it before "+
				"creating this one.", client.DisplayName(), item.GetNamespace(), item.GetName(), istioCSRRejectAnnotation))
		return
	}
}

// checkIstioCSRIssuer looks the issuer up where the operator does
// (deployments.go getIssuer: an Issuer in istio.namespace, or a
// ClusterIssuer) and refuses what the operator would: an ACME issuer
// (assertIssuerRefExists, irrecoverable), and, into caDiags, a CA issuer
// whose secret is not in istio.namespace with a non-empty ca.crt
// (createCAConfigMapFromIssuerSecret reads it there, for a ClusterIssuer
// too, and retries forever), unless istio_ca_certificate is set (the
// operator then skips the issuer's CA). atApply leaves out the warning
// about a missing issuer, which the plan gave.
func checkIstioCSRIssuer(ctx context.Context, client *kube.Client, planned istioCSRPlanned, atApply bool, diags, caDiags *diag.Diagnostics) {
	refPath := path.Root("cert_manager").AtName("issuer_ref")
	kind, issuerNS, what := kube.CertManagerIssuer, planned.istioNS, fmt.Sprintf("Issuer %s/%s", planned.istioNS, planned.issuerName)
	if planned.issuerKind == istioCSRIssuerKindClusterIssuer {
		kind, issuerNS, what = kube.CertManagerClusterIssuer, "", "ClusterIssuer "+planned.issuerName
	} else if planned.issuerKind != istioCSRIssuerKindIssuer {
		return // the kind's own validator reports it
	}
	issuer, err := client.Get(ctx, kind, issuerNS, planned.issuerName)
	switch {
	case kube.IsNotFound(err) && atApply:
		return
	case kube.IsNotFound(err):
		detail := fmt.Sprintf("The cert-manager %s does not exist on cluster %q. ", what, client.DisplayName())
		if kind == kube.CertManagerIssuer {
			detail = fmt.Sprintf("The cert-manager Issuer %q does not exist in the namespace %q (istio.namespace) on cluster %q. "+
				"The cert-manager Operator looks an issuer of kind Issuer up in the Istio control plane's namespace, not "+
				"in the IstioCSR's. Until it exists there, the operator retries and the apply waits until its timeout. "+
				"Create it in %q (or let this resource depend on what creates it), or name a ClusterIssuer.",
				planned.issuerName, planned.istioNS, client.DisplayName(), planned.istioNS)
			if planned.namespace != planned.istioNS {
				if _, err := client.Get(ctx, kube.CertManagerIssuer, planned.namespace, planned.issuerName); err == nil {
					detail += fmt.Sprintf(" An Issuer %q exists in the IstioCSR's namespace %q: the operator does not use it.",
						planned.issuerName, planned.namespace)
				}
			}
		} else {
			detail += "Until it exists, the operator retries and the apply waits until its timeout. Create it (or let " +
				"this resource depend on what creates it)."
		}
		diags.AddAttributeWarning(refPath.AtName("name"), "Issuer Not Found", detail)
		return
	case err != nil:
		if d, ok := kube.NotCheckedWarning(err, "that the cert-manager "+what+" exists and is not an ACME issuer"); ok {
			diags.Append(d)
		}
		return
	}
	spec, _ := objMap(issuer.Object, "spec")
	if _, acme := spec["acme"]; acme {
		validate.AttributeError(diags, refPath.AtName("name"), "ACME Issuer Not Supported", fmt.Sprintf(
			"The cert-manager %s on cluster %q is an ACME issuer. The cert-manager Operator refuses ACME issuers for "+
				"istio-csr (deployments.go assertIssuerRefExists: \"uses unsupported ACME issuer\"), an error it does not "+
				"retry, and issuer_ref cannot change on the object. Name a CA, Vault or other non-ACME issuer.", what, client.DisplayName()))
		return
	}
	caSpec, _ := objMap(spec, "ca")
	secretName := objText(caSpec["secretName"])
	if secretName == "" || planned.caCert != nil {
		return
	}
	secret, err := client.Get(ctx, kube.Secret, planned.istioNS, secretName)
	problem := ""
	switch {
	case kube.IsNotFound(err):
		problem = "does not exist"
	case err != nil:
		if d, ok := kube.NotCheckedWarning(err, fmt.Sprintf("that the CA Secret %s/%s of the %s holds ca.crt", planned.istioNS, secretName, what)); ok {
			caDiags.Append(d)
		}
		return
	default:
		if data, _ := objMap(secret.Object, "data"); objText(data["ca.crt"]) == "" {
			problem = "has no ca.crt (a Secret holding only tls.crt and tls.key is not enough)"
		}
	}
	if problem == "" {
		return
	}
	detail := fmt.Sprintf("The %s is a CA issuer whose secret %q the cert-manager Operator reads in istio.namespace %q "+
		"(deployments.go createCAConfigMapFromIssuerSecret, also for a ClusterIssuer), and the Secret %s/%s %s there. "+
		"The operator would retry forever and the apply would wait until its timeout. ",
		what, secretName, planned.istioNS, planned.istioNS, secretName, problem)
	if kind == kube.CertManagerClusterIssuer {
		detail += "A ClusterIssuer's secret usually lives in cert-manager's cluster resource namespace: set " +
			"cert_manager.istio_ca_certificate to a ConfigMap holding the CA certificate instead, or copy the Secret " +
			"(with ca.crt) into istio.namespace."
	} else {
		detail += "Create the Secret with a ca.crt key, or set cert_manager.istio_ca_certificate."
	}
	validate.AttributeError(caDiags, refPath.AtName("name"), "CA Issuer Secret Not Usable", detail)
}

// checkIstioCACertificate mirrors deployments.go handleUserProvidedCA: the
// ConfigMap (in the IstioCSR's namespace unless namespace is set) must
// exist, hold key, and its first PEM block must be a CA certificate that
// may sign certificates. Each failure is irrecoverable for the operator,
// and a ConfigMap created later does not even wake it.
func checkIstioCACertificate(ctx context.Context, client *kube.Client, planned istioCSRPlanned, diags *diag.Diagnostics) {
	caPath := path.Root("cert_manager").AtName("istio_ca_certificate")
	ns := planned.caCert.Namespace.ValueString()
	if ns == "" {
		ns = planned.namespace
	}
	name, key := planned.caCert.Name.ValueString(), planned.caCert.Key.ValueString()
	cm, err := client.Get(ctx, kube.ConfigMap, ns, name)
	switch {
	case kube.IsNotFound(err):
		validate.AttributeError(diags, caPath.AtName("name"), "CA Certificate ConfigMap Not Found", fmt.Sprintf(
			"The ConfigMap %s/%s does not exist on cluster %q (unset, namespace means the IstioCSR's namespace %q). The "+
				"cert-manager Operator reads it once, before it watches it (deployments.go handleUserProvidedCA): a "+
				"missing ConfigMap is an error it does not retry, even after the ConfigMap appears. Create it first, and "+
				"reference its attributes so Terraform creates it before this resource.",
			ns, name, client.DisplayName(), planned.namespace))
		return
	case err != nil:
		if d, ok := kube.NotCheckedWarning(err, fmt.Sprintf("that the ConfigMap %s/%s holds a CA certificate", ns, name)); ok {
			diags.Append(d)
		}
		return
	}
	data, _ := objMap(cm.Object, "data")
	pemText, ok := data[key].(string)
	if !ok {
		validate.AttributeError(diags, caPath.AtName("key"), "CA Certificate Key Not Found", fmt.Sprintf(
			"The ConfigMap %s/%s on cluster %q has no key %q. The cert-manager Operator reports this as an error it does "+
				"not retry until the ConfigMap changes (deployments.go handleUserProvidedCA).", ns, name, client.DisplayName(), key))
		return
	}
	if problem := caCertificateProblem(pemText); problem != "" {
		validate.AttributeError(diags, caPath.AtName("key"), "Not A CA Certificate", fmt.Sprintf(
			"The key %q of the ConfigMap %s/%s on cluster %q must start with a PEM CA certificate that may sign "+
				"certificates, as the cert-manager Operator checks (deployments.go handleUserProvidedCA, validatePEMData): "+
				"%s.", key, ns, name, client.DisplayName(), problem))
	}
}

// caCertificateProblem applies the operator's validatePEMData to the first
// PEM block: a CERTIFICATE that parses, with basic constraints, CA, and the
// cert-sign key usage. It returns "" when the block passes.
func caCertificateProblem(text string) string {
	block, _ := pem.Decode([]byte(text))
	switch {
	case strings.TrimSpace(text) == "":
		return "the value is empty"
	case block == nil:
		return "the value is not PEM"
	case block.Type != "CERTIFICATE":
		return fmt.Sprintf("the first PEM block is a %s, not a CERTIFICATE", block.Type)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	switch {
	case err != nil:
		return "the certificate does not parse: " + err.Error()
	case !cert.BasicConstraintsValid || !cert.IsCA:
		return "the certificate is not a CA certificate (basic constraints CA:TRUE)"
	case cert.KeyUsage&x509.KeyUsageCertSign == 0:
		return "the certificate's key usage lacks certificate signing"
	}
	return ""
}
