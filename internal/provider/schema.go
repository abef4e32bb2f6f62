package provider

import (
	"strconv"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

const (
	defaultFieldManager = "zerotrust"
	// Client-side limits high enough never to be the bottleneck of a plan:
	// Terraform's -parallelism (10 by default) already bounds the requests in
	// flight, and API servers protect themselves (API Priority and Fairness).
	// What the old 50/100 cost a large plan is measured in bench/ANALYSIS.md
	// ("No client-side throttle").
	defaultQPS   = 1000
	defaultBurst = 2000
	// defaultMaxFederatedTrustDomains is the operator's own limit on
	// federatesWith (validation.go validateFederationConfig), which is also
	// the released CRD's maxItems; it is the most the attribute accepts.
	defaultMaxFederatedTrustDomains = 50
	defaultDNSTimeout               = "5s"
	defaultReconnectTimeout         = "60s"
)

// connectionModel is one cluster connection, shaped like the hashicorp/kubernetes
// provider's arguments so a block can be moved over unchanged.
type connectionModel struct {
	ConfigPath            types.String `tfsdk:"config_path"`
	ConfigPaths           types.List   `tfsdk:"config_paths"`
	ConfigContext         types.String `tfsdk:"config_context"`
	ConfigContextAuthInfo types.String `tfsdk:"config_context_auth_info"`
	ConfigContextCluster  types.String `tfsdk:"config_context_cluster"`
	Host                  types.String `tfsdk:"host"`
	Token                 types.String `tfsdk:"token"`
	ClientCertificate     types.String `tfsdk:"client_certificate"`
	ClientKey             types.String `tfsdk:"client_key"`
	ClusterCACertificate  types.String `tfsdk:"cluster_ca_certificate"`
	Insecure              types.Bool   `tfsdk:"insecure"`
	TLSServerName         types.String `tfsdk:"tls_server_name"`
	ProxyURL              types.String `tfsdk:"proxy_url"`
	Exec                  types.Object `tfsdk:"exec"`
	OnUnreachable         types.String `tfsdk:"on_unreachable"`
	Spire                 types.Object `tfsdk:"spire"`
}

type execModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Command    types.String `tfsdk:"command"`
	Args       types.List   `tfsdk:"args"`
	Env        types.Map    `tfsdk:"env"`
}

type dnsModel struct {
	Resolver types.String `tfsdk:"resolver"`
	Timeout  types.String `tfsdk:"timeout"`
}

type providerModel struct {
	Kubernetes               types.Object                `tfsdk:"kubernetes"`
	Clusters                 types.Map                   `tfsdk:"clusters"`
	FieldManager             types.String                `tfsdk:"field_manager"`
	QPS                      types.Float64               `tfsdk:"qps"`
	Burst                    types.Int64                 `tfsdk:"burst"`
	Spire                    *providerdata.SpireSettings `tfsdk:"spire"`
	MaxFederatedTrustDomains types.Int64                 `tfsdk:"max_federated_trust_domains"`
	DNS                      *dnsModel                   `tfsdk:"dns"`
	OnUnreachable            types.String                `tfsdk:"on_unreachable"`
	ReconnectTimeout         types.String                `tfsdk:"reconnect_timeout"`
}

func connectionAttributes(what string) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"spire": schema.SingleNestedAttribute{
			Optional: true,
			MarkdownDescription: "Where SPIRE runs" + what + ", as the provider's `spire`, which it replaces" + what +
				" when set: its unset attributes take the defaults of its own `install`, not the provider's values. " +
				"A fleet that mixes installs sets it on the clusters whose SPIRE differs, e.g. `spire = { install = \"" +
				providerdata.SpireInstallHelm + "\" }` on an EKS cluster beside OpenShift clusters.",
			Attributes: spireAttributes(),
		},
		"on_unreachable": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "What a run does when the cluster of this connection does not answer at all: `" +
				providerdata.OnUnreachableError + "` or `" + providerdata.OnUnreachableWarn + "`, as the provider's " +
				"`on_unreachable`, which applies when this is unset.",
			Validators: []validator.String{stringvalidator.OneOf(providerdata.OnUnreachableError, providerdata.OnUnreachableWarn)},
		},
		"config_path": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Path to a kubeconfig file" + what + ". `~` is expanded.",
		},
		"config_paths": schema.ListAttribute{
			ElementType:         types.StringType,
			Optional:            true,
			MarkdownDescription: "Several kubeconfig files merged in order, as `KUBECONFIG` does" + what + ".",
			Validators:          []validator.List{},
		},
		"config_context": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Context of the kubeconfig to use; the file's current context when unset" + what + ".",
		},
		"config_context_auth_info": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Overrides the user of the chosen kubeconfig context.",
		},
		"config_context_cluster": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Overrides the cluster of the chosen kubeconfig context.",
		},
		"host": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "API server URL, e.g. `https://1.2.3.4:6443`" + what + ". Overrides the kubeconfig's server.",
		},
		"token": schema.StringAttribute{
			Optional:            true,
			Sensitive:           true,
			MarkdownDescription: "Bearer token" + what + ". Never logged.",
		},
		"client_certificate": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "PEM client certificate for TLS client authentication.",
		},
		"client_key": schema.StringAttribute{
			Optional:            true,
			Sensitive:           true,
			MarkdownDescription: "PEM private key of `client_certificate`. Never logged.",
		},
		"cluster_ca_certificate": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "PEM CA certificate(s) that sign the API server's serving certificate.",
		},
		"insecure": schema.BoolAttribute{
			Optional:            true,
			MarkdownDescription: "Skip verification of the API server's certificate. Defaults to `false`; only for throwaway clusters.",
		},
		"tls_server_name": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "Server name to verify the API server's certificate against, when it differs from `host`.",
		},
		"proxy_url": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "HTTP(S) or SOCKS5 proxy URL to reach the API server through.",
		},
		"exec": schema.SingleNestedAttribute{
			Optional: true,
			MarkdownDescription: "Credential plugin run to obtain a token, e.g. `aws eks get-token`, " +
				"`gke-gcloud-auth-plugin` or `kubelogin`. It runs non-interactively.",
			Attributes: map[string]schema.Attribute{
				"api_version": schema.StringAttribute{
					Required:            true,
					MarkdownDescription: "API version of the ExecCredential, e.g. `client.authentication.k8s.io/v1beta1`.",
					Validators: []validator.String{stringvalidator.OneOf(
						"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")},
				},
				"command": schema.StringAttribute{
					Required:            true,
					MarkdownDescription: "Command to run.",
				},
				"args": schema.ListAttribute{
					ElementType:         types.StringType,
					Optional:            true,
					MarkdownDescription: "Arguments of the command.",
				},
				"env": schema.MapAttribute{
					ElementType:         types.StringType,
					Optional:            true,
					MarkdownDescription: "Extra environment variables for the command.",
				},
			},
		},
	}
}

func providerSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "The zerotrust provider bootstraps SPIFFE trust across Kubernetes clusters: SPIRE " +
			"federation, ClusterFederatedTrustDomains with their bootstrap bundles, istio-csr, mesh trust domains " +
			"and domain verification. One provider block can reach many clusters through `clusters`, so one " +
			"`for_each` can fan out over every cluster and every pair of clusters. A fleet may mix SPIRE installs: " +
			"the OpenShift operator's (the default) and the SPIFFE Helm chart's (EKS, GKE, AKS), set per cluster by " +
			"its `spire` object.\n\n" +
			"Each run (a plan with its refresh, an apply) asks each cluster it needs once whether it answers (`GET " +
			"/version`, one attempt, at most 3 seconds). A cluster that does not answer (nothing listening, no TLS " +
			"handshake, no HTTP answer within the bound) is asked nothing more in that run: every later request to it " +
			"fails at once with an error naming the cluster and its address, never after retries, so one dead cluster " +
			"adds at most 3 seconds to a run. A cluster that answers with an error (401, 403, 5xx) is not dead: its " +
			"requests are retried and fail as usual; nor is one whose certificate does not verify or whose host name " +
			"does not resolve, which fails the run as the configuration error it is. What the rest of the run does " +
			"with a dead cluster is `on_unreachable`'s choice.\n\n" +
			"A cluster that answered earlier in the run and then stops answering (its API server restarts, a managed " +
			"control plane upgrades, a load balancer moves) is not dead either: every request on it waits, retrying " +
			"with backoff, until it answers again or `reconnect_timeout` has passed since it stopped, while the other " +
			"clusters go on. A write whose connection broke is read back before it is sent again, so no object is " +
			"written twice.",
		Attributes: map[string]schema.Attribute{
			"on_unreachable": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "What a run does with a cluster that does not answer at all, for every cluster whose " +
					"own `on_unreachable` is unset. `" + providerdata.OnUnreachableWarn + "` (default) keeps going: the " +
					"refresh of every object on that cluster keeps the state of the last run, with a warning that names " +
					"the cluster, its address, the error and the object, and says that its drift is unknown until the " +
					"cluster answers; data sources reading that cluster return what their descriptions say (mostly null " +
					"outputs, with a warning); the plan skips its checks on that cluster with one warning; and the apply " +
					"applies every change that does not touch it, while each change on it fails at once naming the " +
					"cluster. `" + providerdata.OnUnreachableError + "` fails the refresh and every data source read on " +
					"that cluster, so nothing is planned while any cluster is down. " +
					"The trade-off: with `" + providerdata.OnUnreachableWarn + "`, one dead cluster among ten stops " +
					"nothing on the nine others (the reason to manage a fleet in one run), and hides only drift on the " +
					"dead cluster, which the warnings name; with `" + providerdata.OnUnreachableError + "`, a run either " +
					"sees every cluster or does nothing, for pipelines that must not apply a partial view.",
				Validators: []validator.String{stringvalidator.OneOf(providerdata.OnUnreachableError, providerdata.OnUnreachableWarn)},
			},
			"reconnect_timeout": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "How long a run waits for a cluster that answered earlier in the same run and then " +
					"stopped answering (refused, reset or timed-out connections, as while its API server restarts), " +
					"as a Go duration. Defaults to `" + defaultReconnectTimeout + "`. Meanwhile every request on that " +
					"cluster, in a plan's refresh and data sources as in an apply, retries with backoff (up to 2 s " +
					"apart), and requests on the other clusters go on (each waiting request holds one of Terraform's " +
					"`-parallelism` slots). When the cluster answers again within the " +
					"bound, the run goes on as if nothing happened; when it does not, this and every remaining request " +
					"on it fail at once with \"Cluster Stopped Answering\", naming the cluster and how long it was " +
					"waited for, and the next apply resumes where this one stopped. A resource's own `timeouts`, when " +
					"shorter, end its requests' wait first. Raise it for control planes whose upgrades refuse " +
					"connections for longer; `on_unreachable`, not this, decides what happens to a cluster that does " +
					"not answer when the run first needs it. In the first seconds after the cluster answers again, a " +
					"refusal of the credentials (401, 403) is retried too, since a restarted API server refuses " +
					"requests until it has loaded its RBAC; one that persists is reported as such.",
				Validators: []validator.String{validate.Duration(), validate.DurationAtLeast(time.Second,
					"the API server of a cluster that restarts needs more than that to answer again")},
			},
			"kubernetes": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "The default cluster connection, used by resources whose `cluster` is unset. " +
					"Same arguments as the hashicorp/kubernetes provider; unset arguments fall back to the " +
					"environment variables `KUBE_CONFIG_PATH`, `KUBE_CONFIG_PATHS`, `KUBE_CTX`, `KUBE_CTX_AUTH_INFO`, " +
					"`KUBE_CTX_CLUSTER`, `KUBE_HOST`, `KUBE_TOKEN`, `KUBE_CLUSTER_CA_CERT_DATA`, " +
					"`KUBE_CLIENT_CERT_DATA`, `KUBE_CLIENT_KEY_DATA`, `KUBE_INSECURE`, `KUBE_TLS_SERVER_NAME` and `KUBE_PROXY_URL`.",
				Attributes: connectionAttributes(""),
			},
			"clusters": schema.MapNestedAttribute{
				Optional: true,
				MarkdownDescription: "Named cluster connections, keyed by a name of your choice. A resource or data " +
					"source selects one with its `cluster` argument. Environment variables do not apply here.",
				NestedObject: schema.NestedAttributeObject{Attributes: connectionAttributes(" for this cluster")},
			},
			"field_manager": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Field manager name for server-side apply. Defaults to `" + defaultFieldManager +
					"`. Give each Terraform workspace (state) that writes to a cluster its own, such as " +
					"`zerotrust-<workspace>`: objects another manager wrote are never taken over silently, so the plan " +
					"then refuses a second workspace declaring an object (or a federation) one workspace already " +
					"manages, naming that workspace's manager (see the guide \"One workspace per cluster\"). " +
					"Changing it on existing resources makes the new manager conflict with the old one.",
				Validators: []validator.String{stringvalidator.LengthBetween(1, 128)},
			},
			"qps": schema.Float64Attribute{
				Optional: true,
				MarkdownDescription: "Client-side request rate limit per cluster, in requests per second. Defaults " +
					"to `" + strconv.Itoa(defaultQPS) + "`, high enough that Terraform's `-parallelism` (how many requests are in flight) " +
					"decides the pace and the API server's priority and fairness protects it; lower it for " +
					"an API server that must not see bursts from Terraform.",
				Validators: []validator.Float64{float64validator.Between(1, 10000)},
			},
			"burst": schema.Int64Attribute{
				Optional:            true,
				MarkdownDescription: "Client-side request burst per cluster. Defaults to `" + strconv.Itoa(defaultBurst) + "`.",
				Validators:          []validator.Int64{int64validator.Between(1, 100000)},
			},
			"max_federated_trust_domains": schema.Int64Attribute{
				Optional: true,
				MarkdownDescription: "Most `federates_with` entries a `zerotrust_spire_federation` may hold, 1 to " +
					strconv.Itoa(defaultMaxFederatedTrustDomains) + ". Defaults to `" + strconv.Itoa(defaultMaxFederatedTrustDomains) + "`: the Zero Trust Workload Identity Manager operator refuses more whatever its CRD " +
					"allows (its validateFederationConfig hard-codes \"federatesWith array cannot exceed 50 entries\"), " +
					"so only a lower limit can be set.",
				Validators: []validator.Int64{int64validator.Between(1, defaultMaxFederatedTrustDomains)},
			},
			"dns": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "Defaults for the DNS checks of domain verification.",
				Attributes: map[string]schema.Attribute{
					"resolver": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "Recursive resolver (`host:port`) used to find a zone's authoritative servers. " +
							"Defaults to the first nameserver of `/etc/resolv.conf`. Answers themselves always come from " +
							"the authoritative servers, never from this resolver's cache.",
					},
					"timeout": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Timeout of one DNS query, as a Go duration. Defaults to `" + defaultDNSTimeout + "`.",
					},
				},
			},
			"spire": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "Where SPIRE runs in the clusters, used as defaults by every resource, data source " +
					"and action that talks to SPIRE, on every cluster whose own `spire` is unset.",
				Attributes: spireAttributes(),
			},
		},
	}
}

// spireAttributes are the attributes of a `spire` object, the provider's
// and each connection's: ResolveSpire turns them into one cluster's SPIRE.
func spireAttributes() map[string]schema.Attribute {
	op, helm := "`"+providerdata.SpireInstallOperator+"`", "`"+providerdata.SpireInstallHelm+"`"
	return map[string]schema.Attribute{
		"install": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "How SPIRE was installed, which sets the defaults of the other attributes: " + op +
				" (default), the OpenShift Zero Trust Workload Identity Manager operator, or " + helm + ", the SPIFFE " +
				"project's hardened Helm chart `spire` with `global.spire.recommendations` (as on EKS, GKE or AKS). " +
				"The SPIRE server pod is `spire-server-0` for " + op + " and `<helm_release>-server-0` for " + helm +
				" (`<helm_release>-0` when the release name contains `server`), container `spire-server` for both. " +
				"`zerotrust_spire_federation`, which edits the operator's SpireServer, is refused on a " + helm +
				" cluster.",
			Validators: []validator.String{stringvalidator.OneOf(providerdata.SpireInstalls...)},
		},
		"namespace": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Namespace of the SPIRE server. Defaults to `" + providerdata.OperatorSpireNamespace +
				"` (the operator's `OPERATOR_NAMESPACE`) for " + op + " and `" + providerdata.HelmSpireNamespace +
				"` for " + helm + ". The operator's federation Route is read in `" + providerdata.OperatorSpireNamespace +
				"` whatever this says: the operator always puts it there.",
			Validators: []validator.String{validate.DNSLabel()},
		},
		"class_name": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "spire-controller-manager's `className`, the default `class_name` of " +
				"ClusterFederatedTrustDomains and ClusterSPIFFEIDs: a controller manager with a class ignores objects " +
				"of other classes. Defaults to `" + providerdata.OperatorSpireClassName + "` (the operator's class) for " +
				op + " and `<namespace>-<helm_release>` (the chart's `<release namespace>-<release name>`, `" +
				providerdata.HelmSpireNamespace + "-" + providerdata.HelmSpireRelease + "` with the defaults) for " +
				helm + "; `\"\"` sets no class.",
		},
		"helm_release": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Name of the chart's Helm release, which names the server's objects; only " + helm +
				" reads it. Defaults to `" + providerdata.HelmSpireRelease + "`.",
			Validators: []validator.String{validate.DNSLabel(), stringvalidator.LengthAtMost(53)},
		},
		"bundle_namespace": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "Namespace of the ConfigMap `" + providerdata.SpireBundleConfigMap + "` that SPIRE " +
				"publishes its trust bundle to, where `zerotrust_trust_bundle` reads it by default. Defaults to " +
				"`namespace` for " + op + " and `" + providerdata.HelmSpireBundleNS + "` (the chart's agents' namespace) " +
				"for " + helm + ".",
			Validators: []validator.String{validate.DNSLabel()},
		},
	}
}
