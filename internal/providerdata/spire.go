package providerdata

import (
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// The two ways a cluster's SPIRE is installed, the values of `install`.
const (
	// SpireInstallOperator is the OpenShift Zero Trust Workload Identity
	// Manager operator.
	SpireInstallOperator = "operator"
	// SpireInstallHelm is the SPIFFE project's hardened Helm chart `spire`
	// with global.spire.recommendations, as on EKS, GKE and AKS.
	SpireInstallHelm = "helm"
)

// SpireInstalls lists the values of `install`, the default first.
var SpireInstalls = []string{SpireInstallOperator, SpireInstallHelm}

// What each install puts where when nothing else is configured. The chart's
// names follow its templates (spire-server.fullname, the controller
// manager's className default, the bundle ConfigMap of the recommended
// layout).
const (
	OperatorSpireNamespace = "zero-trust-workload-identity-manager"
	OperatorSpireClassName = "zero-trust-workload-identity-manager-spire"
	HelmSpireNamespace     = "spire-server"
	HelmSpireRelease       = "spire"
	HelmSpireBundleNS      = "spire-system"
	// SpireServerContainer and SpireBundleConfigMap are the same for both.
	SpireServerContainer = "spire-server"
	SpireBundleConfigMap = "spire-bundle"
	operatorSpireServer  = "spire-server"
	// helmServerName is the umbrella chart's nameOverride of its server
	// subchart.
	helmServerName = "server"
)

// SpireSettings is a `spire` object as configured (the provider's or one
// cluster's): null attributes take their install's defaults (ResolveSpire).
type SpireSettings struct {
	Install         types.String `tfsdk:"install"`
	Namespace       types.String `tfsdk:"namespace"`
	ClassName       types.String `tfsdk:"class_name"`
	HelmRelease     types.String `tfsdk:"helm_release"`
	BundleNamespace types.String `tfsdk:"bundle_namespace"`
}

// Spire is where one cluster's SPIRE is, every value resolved: what every
// resource, data source and action that talks to SPIRE takes as its
// defaults on that cluster.
type Spire struct {
	// Install is SpireInstallOperator or SpireInstallHelm.
	Install string
	// Namespace, Pod and Container are the SPIRE server pod `spire-server`
	// commands run in.
	Namespace, Pod, Container string
	// ClassName is spire-controller-manager's className; "" sets none.
	ClassName string
	// BundleNamespace and BundleConfigMap are the ConfigMap SPIRE publishes
	// its trust bundle to.
	BundleNamespace, BundleConfigMap string
	// HelmRelease is the chart's release name; "" for the operator.
	HelmRelease string
}

// IsHelm reports whether the chart installed this SPIRE.
func (s Spire) IsHelm() bool { return s.Install == SpireInstallHelm }

// ResolveSpire fills what s leaves unset with the defaults of its install
// (operator when unset). A class_name set to "" stays "": no class.
func ResolveSpire(s SpireSettings) Spire {
	out := Spire{Install: StringOr(s.Install, SpireInstallOperator), Container: SpireServerContainer,
		BundleConfigMap: SpireBundleConfigMap}
	if out.IsHelm() {
		out.HelmRelease = StringOr(s.HelmRelease, HelmSpireRelease)
		out.Namespace = StringOr(s.Namespace, HelmSpireNamespace)
		out.ClassName = out.Namespace + "-" + out.HelmRelease
		out.BundleNamespace = StringOr(s.BundleNamespace, HelmSpireBundleNS)
		out.Pod = HelmServerFullname(out.HelmRelease) + "-0"
	} else {
		out.Namespace = StringOr(s.Namespace, OperatorSpireNamespace)
		out.ClassName = OperatorSpireClassName
		out.BundleNamespace = StringOr(s.BundleNamespace, out.Namespace)
		out.Pod = operatorSpireServer + "-0"
	}
	if !s.ClassName.IsNull() && !s.ClassName.IsUnknown() {
		out.ClassName = s.ClassName.ValueString()
	}
	return out
}

// HelmServerFullname is the chart's server fullname (its StatefulSet and
// ConfigMap) for a release: the umbrella chart sets the server subchart's
// nameOverride to `server`, and spire-server.fullname is the release name
// itself when it contains that name, else `<release>-server`.
func HelmServerFullname(release string) string {
	if strings.Contains(release, helmServerName) {
		return release
	}
	return release + "-" + helmServerName
}

// SpireOf is the SPIRE of client's cluster: the cluster's own `spire`
// object when it has one, else the provider's. A nil client (no cluster
// yet) gets the provider's.
func (d *Data) SpireOf(client *kube.Client) Spire {
	if client == nil {
		if d == nil {
			return ResolveSpire(SpireSettings{})
		}
		return d.Spire
	}
	return d.spireOfKey(client.Name)
}

// SpireAt is SpireOf for a `cluster` attribute (null is the `kubernetes`
// connection), for the defaults a plan sets before (or without) a client: a
// cluster whose connection is not known yet still has its own `spire`.
func (d *Data) SpireAt(cluster types.String) Spire {
	return d.spireOfKey(ClusterKey(cluster))
}

func (d *Data) spireOfKey(key string) Spire {
	if d == nil {
		return ResolveSpire(SpireSettings{})
	}
	if s, ok := d.ClusterSpire[key]; ok {
		return s
	}
	return d.Spire
}
