package resources

import (
	"context"
	"regexp"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	corev1 "k8s.io/api/core/v1"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/durationtype"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// The IstioCSR CRD's defaults and limits (cert-manager Operator for Red Hat
// OpenShift, operator.openshift.io/v1alpha1), mirrored so a plan fails where
// the API server would.
const (
	istioCSRDefaultLogLevel         = 1
	istioCSRDefaultLogFormat        = "text"
	istioCSRDefaultDuration         = "1h"
	istioCSRDefaultRenewBefore      = "30m"
	istioCSRDefaultMaxDuration      = "1h"
	istioCSRDefaultKeyAlgorithm     = "RSA"
	istioCSRDefaultKeySize          = 2048
	istioCSRDefaultClusterID        = "Kubernetes"
	istioCSRDefaultPort             = 443
	istioCSRDefaultRevision         = "default"
	istioCSRDefaultIssuerGroup      = "cert-manager.io"
	istioCSRMaxSelectorLength       = 4096
	istioCSRMaxCommonNameLength     = 64
	istioCSRMaxTrustDomainLength    = 63
	istioCSRMaxDNSNames             = 25
	istioCSRMaxDNSNameLength        = 253
	istioCSRMaxClusterIDLength      = 253
	istioCSRMaxRevisions            = 25
	istioCSRMaxRevisionLength       = 63
	istioCSRMaxTolerations          = 50
	istioCSRMaxNodeSelector         = 50
	istioCSRMaxControllerLabels     = 20
	istioCSRMaxConfigMapKeyLength   = 253
	istioCSRKeyAlgorithmRSA         = "RSA"
	istioCSRKeyAlgorithmECDSA       = "ECDSA"
	istioCSRIssuerKindIssuer        = "Issuer"
	istioCSRIssuerKindClusterIssuer = "ClusterIssuer"
	// cert-manager's ValidateDuration: the webhook refuses istiod's
	// Certificate below these, and the operator reports Degraded.
	istioCSRMinDuration    = time.Hour
	istioCSRMinRenewBefore = 5 * time.Minute
	// istioCSRIssuerSpellingReason says why issuer_ref's kind and group must
	// be spelled exactly.
	istioCSRIssuerSpellingReason = "the IstioCSR's rules compare in lower case, but the cert-manager Operator copies the " +
		"value verbatim into istiod's Certificate and the agent's arguments (certificates.go updateCertificateParams, " +
		"deployments.go updateArgList), and cert-manager accepts only this spelling (its webhook refuses another kind; " +
		"another group is taken for an external issuer that never signs)"
)

var (
	istioCSRKeyAlgorithms = []string{istioCSRKeyAlgorithmRSA, istioCSRKeyAlgorithmECDSA}
	istioCSRKeySizes      = []int64{256, 384, 2048, 4096, 8192}
	istioCSRRSAKeySizes   = []int64{2048, 4096, 8192}
	istioCSRECDSAKeySizes = []int64{256, 384}
	istioCSRLogFormats    = []string{"text", "json"}
	configMapKeyPattern   = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

	tolerationOperators = []string{string(corev1.TolerationOpExists), string(corev1.TolerationOpEqual)}
	tolerationEffects   = []string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}
)

func (r *istioCSRResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = istioCSRSchema(ctx)
}

func istioCSRSchema(ctx context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "The `IstioCSR` of the cert-manager Operator for Red Hat OpenShift " +
			"(`operator.openshift.io/v1alpha1`, namespaced, always named `default`): the operator runs cert-manager's " +
			"istio-csr agent, which signs the certificates of istiod and of the mesh's workloads with a cert-manager " +
			"issuer. The whole `spec.istioCSRConfig` is flattened to the top level, with the CRD's defaults and limits " +
			"checked at plan time.\n\n" +
			"**Ready.** After each create and update the resource waits (see `timeouts`) until the agent serves: the " +
			"operator reports `Ready=True` (which by itself only means it applied its objects), the agent's Deployment " +
			"`cert-manager-istio-csr` has rolled out with an available replica, and cert-manager reports istiod's " +
			"Certificate `istiod` (in `istio.namespace`) Ready with the configured duration, renew-before, common name and " +
			"DNS names. The operator says nothing about which change it has seen, so an update waits at least a few " +
			"seconds before it accepts that evidence. `Degraded=True` (an error the operator does not retry until the " +
			"object changes) fails the apply at once with the operator's message; a timeout says what was still missing. " +
			"A failed update is never replaced: Terraform does not taint an update, the state keeps what was written " +
			"(what the cluster holds), and the agent keeps serving with its previous configuration. As the operator " +
			"tries again only when the IstioCSR changes, the fix goes into this resource's configuration (or, when the " +
			"cause is elsewhere, is followed by a change of it), and that apply updates the object in place.\n\n" +
			"**One IstioCSR per cluster.** The operator serves only the oldest IstioCSR of a cluster and rejects every " +
			"other one for good (annotation `operator.openshift.io/istio-csr-reject-multiple-instance`, never removed): the " +
			"plan refuses a second IstioCSR when it can see the first, and an apply the operator rejects fails at once; " +
			"such an object must be deleted and created again once the other one is gone.\n\n" +
			"**Checked at plan.** When the plan creates or replaces the object and the cluster answers quickly, it also " +
			"checks what the operator would refuse or retry forever. An ACME issuer is a plan error. A CA issuer whose " +
			"secret (with `ca.crt`) is not in `istio.namespace` (where the operator reads it, also for a ClusterIssuer), " +
			"and an `istio_ca_certificate` ConfigMap that is missing, lacks the key or holds no CA certificate, are " +
			"plan warnings, because an earlier resource of the same apply may create them: the apply checks them again " +
			"before it writes the object and refuses with the same message, writing nothing. A missing issuer is only a " +
			"warning: the operator retries it.\n\n" +
			"**Destroy.** The operator removes nothing it created for an IstioCSR, so after deleting the object (and " +
			"waiting until it is gone) the provider deletes those objects itself, found by the operator's labels: the " +
			"Deployment, Services, ServiceAccount, NetworkPolicies and CA ConfigMap copy labelled " +
			"`app=cert-manager-istio-csr` in `namespace`, and the Roles, RoleBindings, Certificate `istiod`, ClusterRole " +
			"and ClusterRoleBinding labelled also `cert-manager-istio-csr-namespace=<namespace>`. It leaves cert-manager's " +
			"Secret `istiod-tls`, the issuer and its CA, and everything of an IstioCSR the operator had rejected (it " +
			"created nothing).\n\n" +
			"**Replacement.** `cert_manager.issuer_ref`, `istiod_tls.private_key_algorithm`, `istiod_tls.private_key_size`, " +
			"`server.port`, `istio.namespace` and `namespace` cannot change on the object, so changing them replaces it: " +
			"the old object and its agent are removed (see Destroy) before the new one is created, so one agent remains. " +
			"Until the new agent is ready, istiod and sidecars cannot get certificates signed; workloads keep their current " +
			"certificates until these expire, so keep the replacement shorter than the workload certificate lifetime. " +
			"A new issuer or key type also means new istiod serving certificates: plan it as a CA rotation.\n\n" +
			"**What the operator rewrites.** When it first takes an object the operator writes its spec back in its own " +
			"form (`1h` as `1h0m0s`, `0.5` as `500m`, an empty `resources`): durations and quantities compare by meaning " +
			"and an empty `resources` reads as unset, so this is no change. The operator then co-owns those fields: a " +
			"new value is taken over from it without `force_conflicts`, but removing the attribute keeps the value the " +
			"object has.\n\n" +
			"**Unset attributes.** The provider sends only what the configuration sets. An unset attribute takes the " +
			"CRD default on a new object (the API server fills it in) and keeps an existing object's value, so an " +
			"IstioCSR created by another tool imports with an empty plan; only a value this provider set itself is " +
			"removed when its attribute is removed (and then returns to the CRD default).\n\n" +
			"**Released API.** The schema follows the released CRD (openshift/cert-manager-operator " +
			"`config/crd/bases/operator.openshift.io_istiocsrs.yaml`). Where it differs from the enhancement proposal: " +
			"`istiod_tls.trust_domain` has no DNS-1123 rule there (the provider checks it as a SPIFFE trust domain); " +
			"`istio.namespace` and `istio_ca_certificate.name`/`namespace` have no name rules there (the provider " +
			"still checks them as Kubernetes names, which they are); `server` and the proposal's other optional " +
			"objects have no default of their own; `resources` is a typed `ResourceRequirements` whose `claims` are " +
			"keyed by name. `issuer_ref.kind` and `group` have no CRD default but the CRD's rules read them, so `kind` " +
			"is required and `group` is always sent.",
		Attributes: map[string]schema.Attribute{
			"id": idAttribute("`<namespace>` on the default connection, `<cluster>/<namespace>` otherwise (the object is " +
				"always named `default`); also the import ID."),
			"cluster": clusterAttribute(),
			"namespace": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Namespace of the singleton IstioCSR `default`, where the operator deploys the istio-csr " +
					"agent (often `cert-manager` or `istio-csr`). It must exist. An `Issuer` for `cert_manager.issuer_ref` " +
					"belongs in `istio.namespace`, not here. Changing it replaces the object.",
				Validators:    []validator.String{validate.DNSLabel()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"force_conflicts": forceConflictsAttribute(),
			"log_level": schema.Int64Attribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Verbosity of the istio-csr agent, `1` to `5`. " + istioCSRUnsetText("1"),
				Validators:          []validator.Int64{int64validator.Between(1, 5)},
				PlanModifiers:       []planmodifier.Int64{unsetInt64("istioCSRConfig.logLevel", istioCSRDefaultLogLevel)},
			},
			"log_format": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Log format of the agent: `text` or `json`. " + istioCSRUnsetText("`text`"),
				Validators:          []validator.String{stringvalidator.OneOf(istioCSRLogFormats...)},
				PlanModifiers:       []planmodifier.String{unsetString("istioCSRConfig.logFormat", istioCSRDefaultLogFormat)},
			},
			"istio_data_plane_namespace_selector": schema.StringAttribute{
				Optional: true, Computed: true,
				PlanModifiers: []planmodifier.String{unsetOptional("istioCSRConfig.istioDataPlaneNamespaceSelector", false)},
				MarkdownDescription: "Label selector of the namespaces that receive the `istio-ca-root-cert` ConfigMap, " +
					"for example `maistra.io/member-of=istio-system`. At most 4096 characters. Unset means every namespace. " +
					istioCSRUnsetOptionalText,
				Validators: []validator.String{
					stringvalidator.LengthAtMost(istioCSRMaxSelectorLength), validate.LabelSelector(),
				},
			},
			"cert_manager":      istioCSRCertManagerSchema(),
			"istiod_tls":        istioCSRIstiodTLSSchema(),
			"server":            istioCSRServerSchema(),
			"istio":             istioCSRIstioSchema(),
			"resources":         istioCSRResourcesSchema(),
			"affinity":          istioCSRAffinitySchema(),
			"tolerations":       istioCSRTolerationsSchema(),
			"node_selector":     istioCSRNodeSelectorSchema(),
			"controller_config": istioCSRControllerConfigSchema(),
			"grpc_endpoint": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "The agent's gRPC endpoint, `<service>.<namespace>.svc:<port>` " +
					"(`status.istioCSRGRPCEndpoint`): the CA address for istiod and the mesh (Istio `values.global.caAddress`).",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"image": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "Image of the istio-csr agent the operator deployed (`status.istioCSRImage`).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"service_account": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "ServiceAccount of the agent (`status.serviceAccount`).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"cluster_role": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "ClusterRole the operator created for the agent (`status.clusterRole`).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"cluster_role_binding": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "ClusterRoleBinding the operator created for the agent (`status.clusterRoleBinding`).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"conditions": schema.MapNestedAttribute{
				Computed: true,
				MarkdownDescription: "The operator's status conditions keyed by type (`Ready`, `Degraded`), as last read " +
					"from the cluster.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"status":               schema.StringAttribute{Computed: true, MarkdownDescription: "`True`, `False` or `Unknown`."},
					"reason":               schema.StringAttribute{Computed: true, MarkdownDescription: "Machine-readable reason."},
					"message":              schema.StringAttribute{Computed: true, MarkdownDescription: "Human-readable message."},
					"last_transition_time": schema.StringAttribute{Computed: true, MarkdownDescription: "When the status last changed (RFC 3339)."},
					"observed_generation": schema.Int64Attribute{Computed: true,
						MarkdownDescription: "The object generation the condition describes; the cert-manager Operator never " +
							"says, so it is 0 (and a condition only changes when its status or reason does)."},
				}},
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
}

func istioCSRCertManagerSchema() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Required:            true,
		MarkdownDescription: "cert-manager settings (`spec.istioCSRConfig.certManager`).",
		Attributes: map[string]schema.Attribute{
			"issuer_ref": schema.SingleNestedAttribute{
				Required: true,
				MarkdownDescription: "The cert-manager issuer that signs istiod's and the workloads' certificates: an " +
					"`Issuer` in `istio.namespace` (the Istio control plane's namespace, as the IstioCSR API requires; an " +
					"`Issuer` in `namespace` is not used unless both are the same) or a cluster-wide `ClusterIssuer`. Not an " +
					"ACME issuer (the operator refuses those). A CA issuer's secret must hold `ca.crt` and live in " +
					"`istio.namespace`, also for a ClusterIssuer, unless `istio_ca_certificate` is set. When the plan creates " +
					"the object and the cluster answers, an ACME issuer is a plan error, a missing issuer a warning (the " +
					"operator retries it), and an unusable CA secret a warning that the apply turns into an error before it " +
					"writes the object (the same apply may create the secret). Immutable: changing it replaces the object.",
				// RequiresReplace sits on each field rather than on the object: an
				// unset group is unknown while the object's modifiers run.
				Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{
						Required:            true,
						MarkdownDescription: "Name of the issuer.",
						Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
						PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
					},
					"kind": schema.StringAttribute{
						Required: true,
						MarkdownDescription: "Exactly `Issuer` (looked up in `istio.namespace`) or `ClusterIssuer` (cluster-wide). " +
							"The CRD compares the kind in lower case, but the operator passes it on verbatim to istiod's " +
							"Certificate, whose webhook refuses any other spelling (the operator would report Degraded), so the " +
							"plan does too. The CRD has no default: its rules read the kind, so it must be set.",
						Validators: []validator.String{validate.SpelledExactly(istioCSRIssuerSpellingReason,
							istioCSRIssuerKindIssuer, istioCSRIssuerKindClusterIssuer)},
						PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
					},
					"group": schema.StringAttribute{
						Optional: true, Computed: true,
						MarkdownDescription: "API group of the issuer: exactly `cert-manager.io`, the only group the operator " +
							"accepts (the CRD compares it in lower case, but another spelling reaches istiod's Certificate " +
							"verbatim, and cert-manager then takes it for an external issuer that never signs). The CRD has no " +
							"default but its rules read the group, so the provider always sends it: unset, a new object gets " +
							"`cert-manager.io` and an existing one keeps its value.",
						Validators: []validator.String{validate.SpelledExactly(istioCSRIssuerSpellingReason, istioCSRDefaultIssuerGroup)},
						PlanModifiers: []planmodifier.String{
							unsetString("", istioCSRDefaultIssuerGroup), stringplanmodifier.RequiresReplace(),
						},
					},
				},
			},
			"istio_ca_certificate": schema.SingleNestedAttribute{
				Optional: true, Computed: true,
				PlanModifiers: []planmodifier.Object{unsetOptional("istioCSRConfig.certManager.istioCACertificate", true)},
				MarkdownDescription: "ConfigMap key holding the CA certificate that signed istiod's certificate, when the " +
					"issuer does not return it (for example a private CA behind a Vault issuer, or a CA ClusterIssuer whose " +
					"secret is not in `istio.namespace`). The ConfigMap must exist before the object (the operator reads it " +
					"once and gives up for good), hold the key, and start with a PEM CA certificate that may sign " +
					"certificates. The plan checks all three when the cluster answers and warns (an earlier resource of the " +
					"same apply may create the ConfigMap); the apply checks again before it writes the object and refuses " +
					"there. " + istioCSRUnsetOptionalText,
				Attributes: map[string]schema.Attribute{
					"name": schema.StringAttribute{
						Required:            true,
						MarkdownDescription: "ConfigMap name (DNS-1123 subdomain, at most 253 characters).",
						Validators:          []validator.String{validate.K8sName()},
					},
					"namespace": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "ConfigMap namespace (DNS-1123 label). Unset means `namespace`.",
						Validators:          []validator.String{validate.DNSLabel()},
					},
					"key": schema.StringAttribute{
						Required:            true,
						MarkdownDescription: "Key of the ConfigMap holding the PEM certificate: 1 to 253 letters, digits, `-`, `_` and `.`.",
						Validators: []validator.String{
							stringvalidator.LengthBetween(1, istioCSRMaxConfigMapKeyLength),
							stringvalidator.RegexMatches(configMapKeyPattern, "must consist of letters, digits, '-', '_' or '.'"),
						},
					},
				},
			},
		},
	}
}

func istioCSRIstiodTLSSchema() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Required: true,
		MarkdownDescription: "istiod's serving certificate (`spec.istioCSRConfig.istiodTLSConfig`). Durations are Go " +
			"durations (`1h`, `90m`) and must satisfy `certificate_renew_before` < `certificate_duration` <= " +
			"`max_certificate_duration`, `certificate_duration` >= `1h` and `certificate_renew_before` >= `5m` (cert-manager's " +
			"rules for istiod's Certificate; checked at plan time, the CRD does not check them). Durations compare by " +
			"meaning: the operator rewrites `1h` as `1h0m0s` when it first takes the object, which is no change.",
		Attributes: map[string]schema.Attribute{
			"common_name": schema.StringAttribute{
				Optional: true, Computed: true,
				PlanModifiers: []planmodifier.String{unsetOptional("istioCSRConfig.istiodTLSConfig.commonName", false)},
				MarkdownDescription: "Common name of istiod's certificate, at most 64 characters. Unset means `istiod.<istio namespace>.svc`. " +
					istioCSRUnsetOptionalText,
				Validators: []validator.String{stringvalidator.LengthAtMost(istioCSRMaxCommonNameLength)},
			},
			"trust_domain": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Trust domain of the mesh, used in the SPIFFE URI SANs (`spiffe://<trust_domain>/ns/<ns>/sa/<sa>`): " +
					"a SPIFFE trust domain name of 1 to 63 characters (the CRD limits the length only). Must equal the mesh's " +
					"trust domain (`zerotrust_mesh_trust_domain.trust_domain`).",
				Validators: []validator.String{stringvalidator.LengthBetween(1, istioCSRMaxTrustDomainLength), validate.TrustDomain()},
			},
			"certificate_dns_names": schema.ListAttribute{
				ElementType: types.StringType,
				Optional:    true, Computed: true,
				PlanModifiers: []planmodifier.List{unsetOptional("istioCSRConfig.istiodTLSConfig.certificateDNSNames", true)},
				MarkdownDescription: "DNS names of istiod's certificate, without duplicates: at most 25, each at most 253 " +
					"characters. Unset means names derived from the Istio revisions. " + istioCSRUnsetOptionalText,
				Validators: []validator.List{
					listvalidator.SizeAtMost(istioCSRMaxDNSNames),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(stringvalidator.LengthBetween(1, istioCSRMaxDNSNameLength)),
				},
			},
			"certificate_duration": schema.StringAttribute{
				CustomType: durationtype.Type{},
				Optional:   true, Computed: true,
				MarkdownDescription: "Lifetime of istiod's certificate. " + istioCSRUnsetText("`1h`"),
				Validators: []validator.String{validate.Duration(), validate.DurationAtLeast(istioCSRMinDuration,
					"cert-manager's webhook refuses a shorter Certificate duration (ValidateDuration), and the operator then reports Degraded")},
				PlanModifiers: []planmodifier.String{unsetString("istioCSRConfig.istiodTLSConfig.certificateDuration", istioCSRDefaultDuration)},
			},
			"certificate_renew_before": schema.StringAttribute{
				CustomType: durationtype.Type{},
				Optional:   true, Computed: true,
				MarkdownDescription: "How long before expiry istiod's certificate is renewed. " + istioCSRUnsetText("`30m`"),
				Validators: []validator.String{validate.Duration(), validate.DurationAtLeast(istioCSRMinRenewBefore,
					"cert-manager's webhook refuses a shorter Certificate renewBefore (ValidateDuration), and the operator then reports Degraded")},
				PlanModifiers: []planmodifier.String{unsetString("istioCSRConfig.istiodTLSConfig.certificateRenewBefore", istioCSRDefaultRenewBefore)},
			},
			"max_certificate_duration": schema.StringAttribute{
				CustomType: durationtype.Type{},
				Optional:   true, Computed: true,
				MarkdownDescription: "Longest lifetime istio-csr grants any certificate it signs. " + istioCSRUnsetText("`1h`"),
				Validators:          []validator.String{validate.Duration()},
				PlanModifiers:       []planmodifier.String{unsetString("istioCSRConfig.istiodTLSConfig.maxCertificateDuration", istioCSRDefaultMaxDuration)},
			},
			"private_key_algorithm": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Key algorithm of istiod's certificate: `RSA` or `ECDSA`. " + istioCSRUnsetText("`RSA`") +
					" Immutable: changing it replaces the object (also when unsetting it would bring back the default).",
				Validators: []validator.String{stringvalidator.OneOf(istioCSRKeyAlgorithms...)},
				PlanModifiers: []planmodifier.String{
					unsetString("istioCSRConfig.istiodTLSConfig.privateKeyAlgorithm", istioCSRDefaultKeyAlgorithm), replaceOnceSetString(),
				},
			},
			"private_key_size": schema.Int64Attribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Key size in bits, matching the algorithm: RSA `2048`, `4096` or `8192`; ECDSA `256` or " +
					"`384`. " + istioCSRUnsetText("`2048`") + " (an RSA size, as in the CRD, so ECDSA needs an explicit size). " +
					"Immutable: changing it replaces the object.",
				Validators: []validator.Int64{int64validator.OneOf(istioCSRKeySizes...)},
				PlanModifiers: []planmodifier.Int64{
					unsetInt64("istioCSRConfig.istiodTLSConfig.privateKeySize", istioCSRDefaultKeySize), replaceOnceSetInt64(),
				},
			},
		},
	}
}

func istioCSRServerSchema() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional: true, Computed: true,
		MarkdownDescription: "The agent's gRPC server (`spec.istioCSRConfig.server`). Unset, a new object has none (the " +
			"operator then uses cluster ID `Kubernetes` and port 443) and an existing one keeps what it has, unless only " +
			"this provider set it: then the field is removed.",
		PlanModifiers: []planmodifier.Object{unsetOptional("istioCSRConfig.server", true)},
		Attributes: map[string]schema.Attribute{
			"cluster_id": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Istio cluster ID the agent accepts in certificate requests, at most 253 characters. " +
					istioCSRUnsetText("`Kubernetes`"),
				Validators:    []validator.String{stringvalidator.LengthAtMost(istioCSRMaxClusterIDLength)},
				PlanModifiers: []planmodifier.String{unsetString("istioCSRConfig.server.clusterID", istioCSRDefaultClusterID)},
			},
			"port": schema.Int64Attribute{
				Optional: true, Computed: true,
				MarkdownDescription: "Port of the gRPC service, `1` to `65535`. " + istioCSRUnsetText("`443`") +
					" Immutable once set: changing it replaces the object.",
				Validators: []validator.Int64{int64validator.Between(1, 65535)},
				PlanModifiers: []planmodifier.Int64{
					unsetInt64("istioCSRConfig.server.port", istioCSRDefaultPort), replaceOnceSetInt64(),
				},
			},
		},
	}
}

func istioCSRIstioSchema() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Required:            true,
		MarkdownDescription: "The Istio control plane the agent serves (`spec.istioCSRConfig.istio`).",
		Attributes: map[string]schema.Attribute{
			"namespace": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "Namespace of the Istio control plane (DNS-1123 label), usually `istio-system`. " +
					"A cert-manager `Issuer` named by `cert_manager.issuer_ref` must exist here. Immutable: changing it " +
					"replaces the object.",
				Validators:    []validator.String{validate.DNSLabel()},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"revisions": schema.ListAttribute{
				ElementType: types.StringType,
				Optional:    true, Computed: true,
				MarkdownDescription: "Istio revisions installed in the cluster, which decide istiod's certificate DNS names: " +
					"at most 25, without duplicates, each 1 to 63 characters. " + istioCSRUnsetText("`[\"default\"]`"),
				PlanModifiers: []planmodifier.List{unsetIstioCSRField{
					field: "istioCSRConfig.istio.revisions", composite: true,
					def: types.ListValueMust(types.StringType, []attr.Value{types.StringValue(istioCSRDefaultRevision)}),
				}},
				Validators: []validator.List{
					listvalidator.SizeAtMost(istioCSRMaxRevisions),
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(stringvalidator.LengthBetween(1, istioCSRMaxRevisionLength)),
				},
			},
		},
	}
}
