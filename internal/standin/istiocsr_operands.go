package standin

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What the IstioCSR stand-in creates for an IstioCSR, in the operator's
// order, with the issuer checks before the agent's Deployment.

// reconcileIstioCSRDeployment follows install_istiocsr.go: network
// policies, services, service account, RBAC, istiod's Certificate, the
// Deployment (with the issuer checks and the CA ConfigMap), each status
// field as soon as its step passes, and the processed annotation after the
// first success.
func (s *IstioCSR) reconcileIstioCSRDeployment(ctx context.Context, obj *unstructured.Unstructured) error {
	ns := obj.GetNamespace()
	cfg, _, _ := unstructured.NestedMap(obj.Object, "spec", "istioCSRConfig")
	istioNS, _, _ := unstructured.NestedString(cfg, "istio", "namespace")
	labels := istioCSRResourceLabels(obj)
	mapped := map[string]string{IstioCSRNamespaceLabel: ns}
	for k, v := range labels {
		mapped[k] = v
	}
	port, found, _ := unstructured.NestedInt64(cfg, "server", "port")
	if !found || port == 0 {
		port = 443
	}

	// networkpolicies.go: four policies, asset labels merged with ours.
	for _, name := range []string{"istio-csr-deny-all", "istio-csr-allow-egress-to-api-server", "istio-csr-allow-ingress-to-metrics", "istio-csr-allow-ingress-to-grpc"} {
		l := map[string]string{"istiocsr.operator.openshift.io/owned-by": "istio-csr"}
		for k, v := range labels {
			l[k] = v
		}
		np := istioCSRObject("networking.k8s.io/v1", "NetworkPolicy", ns, name, l, map[string]any{
			"podSelector": map[string]any{"matchLabels": map[string]any{"app": istioCSRAgentName}}, "policyTypes": []any{"Ingress"},
		})
		if err := s.ensure(ctx, networkPolicyGVR, np); err != nil {
			return fromClientError(err, "failed to create network policy %s/%s", ns, name)
		}
	}
	// services.go: the gRPC service (server.port) and the metrics service.
	for name, p := range map[string]int64{istioCSRAgentName: port, istioCSRAgentName + "-metrics": 9402} {
		svc := istioCSRObject("v1", "Service", ns, name, labels, map[string]any{
			"selector": map[string]any{"app": istioCSRAgentName},
			"ports":    []any{map[string]any{"name": "web", "port": p, "targetPort": int64(6443), "protocol": "TCP"}},
		})
		if err := s.ensure(ctx, serviceGVR, svc); err != nil {
			return fromClientError(err, "failed to create service %s/%s", ns, name)
		}
	}
	s.setStatusField(ctx, obj, "istioCSRGRPCEndpoint", fmt.Sprintf("%s.%s.svc:%d", istioCSRAgentName, ns, port))
	// serviceaccounts.go.
	if err := s.ensure(ctx, serviceAccountGVR, istioCSRObject("v1", "ServiceAccount", ns, istioCSRAgentName, labels, nil)); err != nil {
		return fromClientError(err, "failed to create serviceaccount %s/%s", ns, istioCSRAgentName)
	}
	s.setStatusField(ctx, obj, "serviceAccount", istioCSRAgentName)
	// rbacs.go: a ClusterRole and ClusterRoleBinding by generateName, found
	// again by the full label set; Roles and RoleBindings in istio.namespace.
	subject := []any{map[string]any{"kind": "ServiceAccount", "name": istioCSRAgentName, "namespace": ns}}
	clusterRole, err := s.ensureGenerated(ctx, clusterRoleGVR, istioCSRObject("rbac.authorization.k8s.io/v1", "ClusterRole", "", "", mapped, nil),
		map[string]any{"rules": []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps", "namespaces"}, "verbs": []any{"get", "list", "watch"}}}},
		objString(nestedValue(obj.Object, "status", "clusterRole")))
	if err != nil {
		return fromClientError(err, "failed to create clusterrole")
	}
	binding, err := s.ensureGenerated(ctx, clusterRoleBindingGVR, istioCSRObject("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "", mapped, nil),
		map[string]any{"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": clusterRole}, "subjects": subject},
		objString(nestedValue(obj.Object, "status", "clusterRoleBinding")))
	if err != nil {
		return fromClientError(err, "failed to create clusterrolebinding")
	}
	for _, name := range []string{istioCSRAgentName, istioCSRAgentName + "-leases"} {
		role := istioCSRObject("rbac.authorization.k8s.io/v1", "Role", istioNS, name, mapped, nil)
		role.Object["rules"] = []any{map[string]any{"apiGroups": []any{"cert-manager.io"}, "resources": []any{"certificaterequests"}, "verbs": []any{"create", "get"}}}
		if err := s.ensure(ctx, roleGVR, role); err != nil {
			return fromClientError(err, "failed to create role %s/%s", istioNS, name)
		}
		rb := istioCSRObject("rbac.authorization.k8s.io/v1", "RoleBinding", istioNS, name, mapped, nil)
		rb.Object["roleRef"] = map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}
		rb.Object["subjects"] = subject
		if err := s.ensure(ctx, roleBindingGVR, rb); err != nil {
			return fromClientError(err, "failed to create rolebinding %s/%s", istioNS, name)
		}
	}
	s.setStatusField(ctx, obj, "clusterRole", clusterRole)
	s.setStatusField(ctx, obj, "clusterRoleBinding", binding)

	// certificates.go: istiod's Certificate, issuerRef copied verbatim;
	// cert-manager's webhook refuses it with 403 Forbidden, irrecoverable.
	certSpec := istiodCertificateSpec(cfg, istioNS)
	if denial := certManagerWebhookDenial(certSpec); denial != "" {
		return irrecoverable("failed to create %s/%s certificate resource: admission webhook \"webhook.cert-manager.io\" denied the request: %s",
			istioNS, istiodCertificateName, denial)
	}
	if err := s.ensure(ctx, certManagerCertificateGVR, istioCSRObject("cert-manager.io/v1", "Certificate", istioNS, istiodCertificateName, mapped, certSpec)); err != nil {
		return fromClientError(err, "failed to create %s/%s certificate resource", istioNS, istiodCertificateName)
	}

	// deployments.go getDeploymentObject: the issuer checks and the CA copy.
	caPEM, err := s.istioCSRCA(ctx, obj, cfg, istioNS)
	if err != nil {
		return fmt.Errorf("failed to generate deployment resource for creation in %s: %w", ns, err)
	}
	caCopy := istioCSRObject("v1", "ConfigMap", ns, istioCSRCACopyName, labels, nil)
	caCopy.Object["data"] = map[string]any{istioCSRCACopyKey: caPEM}
	if err := s.ensure(ctx, configMapGVR, caCopy); err != nil {
		return fromClientError(err, "failed to create CA ConfigMap %s/%s", ns, istioCSRCACopyName)
	}
	podLabels := map[string]any{}
	for k, v := range labels {
		podLabels[k] = v
	}
	dep := istioCSRObject("apps/v1", "Deployment", ns, istioCSRAgentName, labels, map[string]any{
		"replicas": int64(1),
		"selector": map[string]any{"matchLabels": map[string]any{"app": istioCSRAgentName}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": podLabels},
			"spec": map[string]any{
				"serviceAccountName": istioCSRAgentName,
				"containers": []any{map[string]any{
					"name": istioCSRAgentName, "image": istioCSRStandInImage, "args": istioCSRArgs(cfg, istioNS),
				}},
			},
		},
	})
	if err := s.ensure(ctx, deploymentGVR, dep); err != nil {
		return fromClientError(err, "failed to create deployment %s/%s", ns, istioCSRAgentName)
	}
	s.setStatusField(ctx, obj, "istioCSRImage", istioCSRStandInImage)

	// install_istiocsr.go: the processed annotation after the first success.
	if obj.GetAnnotations()[IstioCSRProcessedAnnotation] != "true" {
		fresh, err := s.istioCSRs().Namespace(ns).Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return fromClientError(err, "failed to fetch istiocsr")
		}
		annotations := fresh.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[IstioCSRProcessedAnnotation] = "true"
		fresh.SetAnnotations(annotations)
		if err := s.updateIstioCSR(ctx, fresh); err != nil {
			return fromClientError(err, "failed to update processed annotation")
		}
	}
	return nil
}

// istioCSRCA follows deployments.go: getIssuer (an Issuer in
// istio.namespace or a ClusterIssuer; not found is retried),
// assertIssuerRefExists (ACME is irrecoverable), then the CA:
// handleUserProvidedCA when istioCACertificate is set (irrecoverable
// failures), else createCAConfigMapFromIssuerSecret for a CA issuer (its
// secret read in istio.namespace, retried), else
// createCAConfigMapFromIstiodCertificate (istiod-tls, retried).
func (s *IstioCSR) istioCSRCA(ctx context.Context, obj *unstructured.Unstructured, cfg map[string]any, istioNS string) (string, error) {
	name, _, _ := unstructured.NestedString(cfg, "certManager", "issuerRef", "name")
	kind, _, _ := unstructured.NestedString(cfg, "certManager", "issuerRef", "kind")
	var issuer *unstructured.Unstructured
	var err error
	if strings.EqualFold(kind, "ClusterIssuer") {
		issuer, err = s.dyn.Resource(certManagerClusterIssuerGVR).Get(ctx, name, metav1.GetOptions{})
	} else {
		issuer, err = s.dyn.Resource(certManagerIssuerGVR).Namespace(istioNS).Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return "", fmt.Errorf("failed to verify issuer in %s/%s: %w", obj.GetNamespace(), obj.GetName(), fromClientError(err, "failed to fetch issuer"))
	}
	if _, acme, _ := unstructured.NestedMap(issuer.Object, "spec", "acme"); acme {
		return "", fmt.Errorf("failed to verify issuer in %s/%s: %w", obj.GetNamespace(), obj.GetName(),
			irrecoverable("spec.istioCSRConfig.certManager.issuerRef uses unsupported ACME issuer: invalid issuerRef config"))
	}
	if ref, found, _ := unstructured.NestedMap(cfg, "certManager", "istioCACertificate"); found {
		cmNS, cmName, key := objString(ref["namespace"]), objString(ref["name"]), objString(ref["key"])
		if cmNS == "" {
			cmNS = obj.GetNamespace()
		}
		cm, err := s.dyn.Resource(configMapGVR).Namespace(cmNS).Get(ctx, cmName, metav1.GetOptions{})
		if err != nil {
			return "", irrecoverable("failed to fetch CA certificate ConfigMap %s/%s: %v", cmNS, cmName, err)
		}
		text, ok, _ := unstructured.NestedString(cm.Object, "data", key)
		if !ok {
			return "", irrecoverable("invalid CA certificate ConfigMap %s/%s: key %q not found in ConfigMap %s/%s", cmNS, cmName, key, cmNS, cmName)
		}
		if !validCAPEM(text) {
			return "", irrecoverable("invalid PEM data in CA certificate ConfigMap %s/%s key %q", cmNS, cmName, key)
		}
		return text, nil
	}
	secretName, _, _ := unstructured.NestedString(issuer.Object, "spec", "ca", "secretName")
	if secretName == "" {
		secretName = istiodSecretName
	}
	secret, err := s.dyn.Resource(secretGVR).Namespace(istioNS).Get(ctx, secretName, metav1.GetOptions{})
	if err != nil {
		return "", fromClientError(err, "failed to fetch secret in issuer")
	}
	encoded, _, _ := unstructured.NestedString(secret.Object, "data", "ca.crt")
	data, _ := base64.StdEncoding.DecodeString(encoded)
	if len(data) == 0 {
		return "", retry("failed to find CA certificate")
	}
	return string(data), nil
}

// validCAPEM is deployments.go validatePEMData on the first PEM block.
func validCAPEM(text string) bool {
	block, _ := pem.Decode([]byte(text))
	if block == nil || block.Type != "CERTIFICATE" {
		return false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	return err == nil && cert.BasicConstraintsValid && cert.IsCA && cert.KeyUsage&x509.KeyUsageCertSign != 0
}

// istiodCertificateSpec is certificates.go updateCertificateParams. It is an
// independent oracle, deliberately not the resource's istiodCertificateSpec
// (internal/resources/istio_csr_operator.go), which the apply's wait
// compares with what this stand-in wrote: with one shared function, a
// mistake in it would agree with itself. This one renders the whole spec,
// as the operator writes it; the resource's only the fields its wait checks.
// A change in updateCertificateParams goes into both.
func istiodCertificateSpec(cfg map[string]any, istioNS string) map[string]any {
	tls, _, _ := unstructured.NestedMap(cfg, "istiodTLSConfig")
	cn := objString(tls["commonName"])
	if cn == "" {
		cn = "istiod." + istioNS + ".svc"
	}
	var dnsNames []any
	if names, ok := tls["certificateDNSNames"].([]any); ok {
		dnsNames = append(dnsNames, names...)
	}
	revisions, _, _ := unstructured.NestedStringSlice(cfg, "istio", "revisions")
	for _, rev := range revisions {
		switch rev {
		case "":
		case "default":
			dnsNames = append(dnsNames, "istiod."+istioNS+".svc")
		default:
			dnsNames = append(dnsNames, "istiod-"+rev+"."+istioNS+".svc")
		}
	}
	trustDomain := objString(tls["trustDomain"])
	ref, _, _ := unstructured.NestedMap(cfg, "certManager", "issuerRef")
	spec := map[string]any{
		"commonName":  cn,
		"uris":        []any{fmt.Sprintf("spiffe://%s/ns/%s/sa/istiod-service-account", trustDomain, istioNS)},
		"duration":    goDuration(tls["certificateDuration"]),
		"renewBefore": goDuration(tls["certificateRenewBefore"]),
		"secretName":  istiodSecretName, "revisionHistoryLimit": int64(1),
		"privateKey": map[string]any{"algorithm": tls["privateKeyAlgorithm"], "size": tls["privateKeySize"], "rotationPolicy": "Always"},
		"issuerRef":  map[string]any{"name": ref["name"], "kind": ref["kind"], "group": ref["group"]},
	}
	if len(dnsNames) > 0 {
		spec["dnsNames"] = dnsNames
	}
	return spec
}

// goDuration is a duration as the operator's typed copy (*metav1.Duration)
// writes it: 1h -> 1h0m0s.
func goDuration(v any) any {
	if d, err := time.ParseDuration(objString(v)); err == nil {
		return d.String()
	}
	return v
}

// certManagerWebhookDenial is cert-manager's Certificate validation
// (internal/apis/certmanager/validation/certificate.go): validateIssuerRef
// and ValidateDuration. "" when the webhook admits spec.
func certManagerWebhookDenial(spec map[string]any) string {
	ref, _ := spec["issuerRef"].(map[string]any)
	group, kind := objString(ref["group"]), objString(ref["kind"])
	if (group == "" || group == "cert-manager.io") && kind != "Issuer" && kind != "ClusterIssuer" {
		return fmt.Sprintf("spec.issuerRef.kind: Invalid value: %q: must be one of Issuer or ClusterIssuer", kind)
	}
	duration, errD := time.ParseDuration(objString(spec["duration"]))
	renew, errR := time.ParseDuration(objString(spec["renewBefore"]))
	switch {
	case errD == nil && duration < time.Hour:
		return fmt.Sprintf("spec.duration: Invalid value: %q: certificate duration must be greater than 1h0m0s", duration)
	case errR == nil && renew < 5*time.Minute:
		return fmt.Sprintf("spec.renewBefore: Invalid value: %q: certificate renewBefore must be greater than 5m0s", renew)
	case errD == nil && errR == nil && renew >= duration:
		return fmt.Sprintf("spec.duration: Invalid value: %q: certificate duration %s must be greater than renewBefore %s", duration, duration, renew)
	}
	return ""
}

// istioCSRArgs is deployments.go updateArgList (durations in whole minutes).
func istioCSRArgs(cfg map[string]any, istioNS string) []any {
	minutes := func(field string) string {
		d, _ := time.ParseDuration(objString(nestedValue(cfg, "istiodTLSConfig", field)))
		return fmt.Sprintf("%.0fm", d.Minutes())
	}
	clusterID := objString(nestedValue(cfg, "server", "clusterID"))
	if clusterID == "" {
		clusterID = "Kubernetes"
	}
	return []any{
		"--log-level=" + objString(cfg["logLevel"]), "--log-format=" + objString(cfg["logFormat"]),
		"--issuer-name=" + objString(nestedValue(cfg, "certManager", "issuerRef", "name")),
		"--issuer-kind=" + objString(nestedValue(cfg, "certManager", "issuerRef", "kind")),
		"--issuer-group=" + objString(nestedValue(cfg, "certManager", "issuerRef", "group")),
		"--cluster-id=" + clusterID, "--trust-domain=" + objString(nestedValue(cfg, "istiodTLSConfig", "trustDomain")),
		"--istiod-cert-duration=" + minutes("certificateDuration"), "--istiod-cert-renew-before=" + minutes("certificateRenewBefore"),
		"--max-client-certificate-duration=" + minutes("maxCertificateDuration"),
		fmt.Sprintf("--serving-address=0.0.0.0:%d", 6443), "--certificate-namespace=" + istioNS,
		"--root-ca-file=/var/run/configmaps/istio-csr/" + istioCSRCACopyKey,
	}
}

// istioCSRResourceLabels is constants.go controllerDefaultResourceLabels
// over spec.controllerConfig.labels (the defaults win).
func istioCSRResourceLabels(obj *unstructured.Unstructured) map[string]string {
	labels := map[string]string{}
	user, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "controllerConfig", "labels")
	for k, v := range user {
		labels[k] = v
	}
	for k, v := range map[string]string{
		"app": istioCSRAgentName, "app.kubernetes.io/name": istioCSRAgentName, "app.kubernetes.io/instance": istioCSRAgentName,
		"app.kubernetes.io/version": "v0.14.2", "app.kubernetes.io/managed-by": "cert-manager-operator",
		"app.kubernetes.io/part-of": "cert-manager-operator",
	} {
		labels[k] = v
	}
	return labels
}

func istioCSRObject(apiVersion, kind, ns, name string, labels map[string]string, spec map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	obj.SetNamespace(ns)
	obj.SetName(name)
	obj.SetLabels(labels)
	if spec != nil {
		obj.Object["spec"] = spec
	}
	return obj
}
