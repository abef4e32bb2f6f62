package resources

import (
	"context"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

const (
	meshKindKyma = "istio_kyma"
	meshKindSail = "istio_sail"
	meshKindKuma = "kuma"

	// istioDefaultTrustDomain is what Istio uses when the mesh sets none.
	istioDefaultTrustDomain = "cluster.local"
	kumaMeshLabel           = "kuma.io/mesh"
	// kumaMaxTrustDomainLen is the released MeshTrust CRD's
	// spec.trustDomain maxLength (go-spiffe allows 255).
	kumaMaxTrustDomainLen = 253
)

// meshKind says where one kind of mesh object keeps its trust settings.
type meshKind struct {
	name             string
	kube             kube.Kind
	defaultNamespace string
	// defaultName is "" when the name derives from the trust domain.
	defaultName string
	// defaultTrustDomain is the mesh's own default, "" when there is none.
	defaultTrustDomain string
	trustDomainPath    []string
	// createsObject: the resource creates the object when it is missing and
	// deletes it on destroy (Kuma's MeshTrust is a standalone declaration).
	// Otherwise the object belongs to an operator and must exist.
	createsObject bool
	missingHint   string
}

var meshKinds = map[string]meshKind{
	meshKindKyma: {
		name: meshKindKyma, kube: kube.KymaIstio, defaultNamespace: "kyma-system", defaultName: "default",
		defaultTrustDomain: istioDefaultTrustDomain, trustDomainPath: []string{"spec", "config", "trustDomain"},
		missingHint: "The Kyma Istio module creates it when the module is enabled (kyma-system/default); create it " +
			"first, or make this resource depend on what creates it.",
	},
	meshKindSail: {
		name: meshKindSail, kube: kube.SailIstio, defaultName: "default",
		defaultTrustDomain: istioDefaultTrustDomain, trustDomainPath: []string{"spec", "values", "meshConfig", "trustDomain"},
		missingHint: "The Sail operator deploys Istio for each Istio object but does not create one: create it first " +
			"(for example with a kubernetes_manifest resource this one depends on).",
	},
	meshKindKuma: {
		name: meshKindKuma, kube: kube.KumaMeshTrust, defaultNamespace: "kuma-system",
		trustDomainPath: []string{"spec", "trustDomain"}, createsObject: true,
	},
}

var (
	sailAliasesPath   = []string{"spec", "values", "meshConfig", "trustDomainAliases"}
	sailCACertsPath   = []string{"spec", "values", "meshConfig", "caCertificates"}
	sailCAAddressPath = []string{"spec", "values", "global", "caAddress"}
	kumaCABundlesPath = []string{"spec", "caBundles"}
	kumaMeshLabelPath = []string{"metadata", "labels", kumaMeshLabel}
)

// meshSchemaAttributes is the resource schema's attributes, built once: the
// attribute types of the nested objects come from it, so the models cannot
// drift from the schema.
var meshSchemaAttributes = sync.OnceValue(func() map[string]schema.Attribute {
	return meshTrustDomainSchema(context.Background()).Attributes
})

// meshNestedAttrTypes is the attribute types of the nested object of the
// top-level attribute name (a single nested attribute or the elements of a
// list nested one).
func meshNestedAttrTypes(name string) map[string]attr.Type {
	t := meshSchemaAttributes()[name].GetType()
	if l, ok := t.(types.ListType); ok {
		t = l.ElemType
	}
	o, _ := t.(types.ObjectType)
	return o.AttrTypes
}

// meshAttrTypes is the attribute types of `mesh` (meshModel).
func meshAttrTypes() map[string]attr.Type { return meshNestedAttrTypes("mesh") }

// caCertificateAttrTypes is the attribute types of one `ca_certificates`
// entry (caCertificateModel).
func caCertificateAttrTypes() map[string]attr.Type { return meshNestedAttrTypes("ca_certificates") }

func meshKindNames() []string { return []string{meshKindKyma, meshKindSail, meshKindKuma} }

func (r *meshTrustDomainResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = meshTrustDomainSchema(ctx)
}

func meshTrustDomainSchema(context.Context) schema.Schema {
	return schema.Schema{
		MarkdownDescription: "The SPIFFE trust domain of a service mesh, and what it trusts besides.\n\n" +
			"- `istio_kyma`: the Kyma Istio module's `Istio` (`operator.kyma-project.io/v1alpha2`, default " +
			"`kyma-system/default`): `spec.config.trustDomain`.\n" +
			"- `istio_sail`: the Sail operator's `Istio` (`sailoperator.io/v1`, cluster-scoped, default `default`): " +
			"`spec.values.meshConfig.trustDomain`, `trustDomainAliases` and `caCertificates` (extra trust anchors per " +
			"trust domain, so the mesh accepts federated peers), and `spec.values.global.caAddress`.\n" +
			"- `kuma`: a Kuma `MeshTrust` (`kuma.io/v1alpha1`, in the Kuma system namespace): the CA bundles the mesh " +
			"accepts for one trust domain, typically a federated peer's, fed from `zerotrust_trust_bundle`.\n\n" +
			"The Istio objects belong to their operators, so they must exist: the resource server-side applies only " +
			"the fields above and never creates them; destroy releases the fields, and the operator's default (trust " +
			"domain `cluster.local`) comes back. A `MeshTrust` is a standalone declaration, so the resource creates it " +
			"when missing and deletes it on destroy, unless another field manager also sets its trust domain and CA " +
			"bundles, in which case destroy only releases this resource's share. Handing an Istio trust domain back " +
			"changes every workload identity (a trust domain change means downtime until certificates rotate), so a " +
			"destroy plan warns; " +
			"`keep_on_destroy = true` leaves the values in place instead.\n\n" +
			"**Changing a trust domain** changes every workload's SPIFFE ID, and a workload gets its new identity only " +
			"when its certificate rotates: in between, peers on the new and the old trust domain may refuse each " +
			"other. The plan warns about it. For Sail, `keep_previous_as_alias = true` keeps each former trust domain " +
			"as an alias, so both identities authenticate during the migration; drop it (or the alias) once every " +
			"certificate has rotated.\n\n" +
			"**Fields left unset are not written.** Without `trust_domain` (Istio kinds) or `mesh.kuma_mesh`, the " +
			"resource neither sets nor changes the field: the attribute shows what the object holds (null when the " +
			"field is absent, which for Istio means `cluster.local`), so an object created by someone else imports " +
			"with an empty plan. Nothing the CRDs default (Sail `spec.version`, `spec.namespace`, " +
			"`spec.updateStrategy`) is ever sent.\n\n" +
			"**Released APIs, not the proposals.** The fields and limits are those of the operators' published CRDs " +
			"(Kyma Istio `v1alpha2`, Sail `v1`, Kuma `MeshTrust` `v1alpha1`). Where they differ from the design " +
			"proposals: Kyma's proposal gives `spec.config.trustDomain` the default `cluster.local`, the released CRD " +
			"declares no default (the module runs on `cluster.local` while the field is absent), so the resource does " +
			"not write it unless configured; the released `MeshTrust` has no `spec.origin` (Kuma reports the origin " +
			"in `status.origin`), so the resource has no such attribute; Sail's `caCertificates` entries may carry " +
			"at most one of `pem` and `spiffeBundleUrl` (a CEL rule), and the resource asks for exactly one, as an " +
			"entry with neither trusts nothing. None of the written fields has a CEL immutability rule (Sail's " +
			"immutable `spec.namespace` is the operator's, never written here).",
		Attributes: map[string]schema.Attribute{
			"id": idAttribute("`<kind>:<name>` (cluster-scoped `istio_sail`) or `<kind>:<namespace>:<name>`, prefixed " +
				"with `<cluster>/` on a cluster of the provider's `clusters` map; also the import ID. A bare `<kind>` " +
				"imports the kind's default object."),
			"cluster": clusterAttribute(),
			"mesh": schema.SingleNestedAttribute{
				Required: true,
				MarkdownDescription: "The mesh object. Changing any part of it (also a derived name) replaces the " +
					"resource: the old object's fields are released and the new object's set.",
				Attributes: map[string]schema.Attribute{
					"kind": schema.StringAttribute{
						Required:            true,
						MarkdownDescription: "`istio_kyma`, `istio_sail` or `kuma`.",
						Validators:          []validator.String{stringvalidator.OneOf(meshKindNames()...)},
					},
					"name": schema.StringAttribute{
						Optional: true, Computed: true,
						MarkdownDescription: "Object name. Defaults to `default` for the Istio kinds, and for `kuma` to the " +
							"trust domain with `.` and `_` replaced by `-` (`west.example.com` gives `west-example-com`).",
						Validators: []validator.String{validate.K8sName()},
					},
					"namespace": schema.StringAttribute{
						Optional: true, Computed: true,
						MarkdownDescription: "Object namespace: `kyma-system` by default for `istio_kyma`, `kuma-system` (the " +
							"Kuma system namespace, where Kuma accepts MeshTrusts) for `kuma`; not allowed for the " +
							"cluster-scoped `istio_sail`.",
						Validators: []validator.String{validate.DNSLabel()},
					},
					"kuma_mesh": schema.StringAttribute{
						Optional: true, Computed: true,
						MarkdownDescription: "`kuma` only: the Kuma mesh the MeshTrust belongs to (its `kuma.io/mesh` label). " +
							"Unset, the resource does not write the label and this shows the object's label (null without one; " +
							"Kuma places a MeshTrust without the label in its `default` mesh). Changing it relabels the object in " +
							"place.",
						Validators: []validator.String{validate.LabelValue(), stringvalidator.LengthAtLeast(1)},
					},
				},
			},
			"trust_domain": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "For the Istio kinds, the mesh's own trust domain (workload IDs " +
					"`spiffe://<trust_domain>/ns/<namespace>/sa/<service account>`). Unset, the resource does not write it: " +
					"the attribute shows the object's value, null when it has none (Istio then runs on `cluster.local`, " +
					"which `spiffe_id_prefix` reflects); removing it from the configuration hands the field back. For " +
					"`kuma`, the trust domain whose CA bundles the mesh accepts; required, at most 253 characters (the " +
					"MeshTrust CRD's limit). Validated with go-spiffe (1 to 255 lowercase letters, digits, `.`, `-`, `_`; " +
					"Kyma's CRD pattern and 1..255 limit accept the same).",
				Validators: []validator.String{validate.TrustDomain()},
			},
			"trust_domain_aliases": schema.ListAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: "`istio_sail` only: other trust domains whose identities the mesh treats as its own " +
					"(`meshConfig.trustDomainAliases`), without duplicates and without `trust_domain`.",
				Validators: []validator.List{
					listvalidator.UniqueValues(),
					listvalidator.ValueStringsAre(validate.TrustDomain()),
				},
			},
			"keep_previous_as_alias": schema.BoolAttribute{
				Optional: true, Computed: true,
				Default: booldefault.StaticBool(false),
				MarkdownDescription: "`istio_sail` only: when `trust_domain` changes (also from the trust domain the mesh " +
					"had before this resource managed it), keep the former one as an alias, so existing identities keep " +
					"authenticating until their certificates rotate (listed in `previous_trust_domains`). Setting it back " +
					"to `false` drops those aliases. Defaults to `false`.",
			},
			"ca_certificates": schema.ListNestedAttribute{
				Optional: true,
				MarkdownDescription: "`istio_sail` only: extra trust anchors (`meshConfig.caCertificates`), e.g. the bundles " +
					"of federated trust domains. Each entry has exactly one of `pem` and `spiffe_bundle_url` (the CRD " +
					"allows at most one).",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"pem": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "PEM CA certificates, e.g. `zerotrust_trust_bundle.x509_authorities_pem`.",
						Validators: []validator.String{
							validate.PEMCertificates(),
							stringvalidator.ExactlyOneOf(path.MatchRelative().AtParent().AtName("spiffe_bundle_url")),
						},
					},
					"spiffe_bundle_url": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "An `https://` SPIFFE bundle endpoint istiod fetches the trust anchors from.",
						Validators:          []validator.String{validate.HTTPSURL()},
					},
					"trust_domains": schema.ListAttribute{
						ElementType: types.StringType, Optional: true,
						MarkdownDescription: "Trust domains these anchors verify; unset means all.",
						Validators:          []validator.List{listvalidator.UniqueValues(), listvalidator.ValueStringsAre(validate.TrustDomain())},
					},
					"cert_signers": schema.ListAttribute{
						ElementType: types.StringType, Optional: true,
						MarkdownDescription: "Kubernetes signers (e.g. `clusterissuers.cert-manager.io/istio-ca`) whose " +
							"certificates these anchors verify.",
						Validators: []validator.List{listvalidator.UniqueValues(), listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))},
					},
				}},
			},
			"ca_address": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "`istio_sail` only: `<host>:<port>` of the CA that signs workload certificates " +
					"(`values.global.caAddress`), e.g. `zerotrust_istio_csr.this.grpc_endpoint` to use cert-manager's " +
					"istio-csr instead of istiod's built-in CA (also set istiod's `ENABLE_CA_SERVER=false`).",
				Validators: []validator.String{validate.HostPort()},
			},
			"ca_bundles": schema.ListAttribute{
				ElementType: types.StringType,
				Optional:    true,
				MarkdownDescription: "`kuma` only, and required there: PEM CA bundles of `trust_domain` (`caBundles` of " +
					"type `Pem`), e.g. `[data.zerotrust_trust_bundle.west.x509_authorities_pem]`. At least one.",
				Validators: []validator.List{
					listvalidator.SizeAtLeast(1),
					listvalidator.ValueStringsAre(validate.PEMCertificatesFor(path.MatchRoot("trust_domain"))),
				},
			},
			"force_conflicts": forceConflictsAttribute(),
			"keep_on_destroy": schema.BoolAttribute{
				Optional: true, Computed: true,
				Default: booldefault.StaticBool(false),
				MarkdownDescription: "What destroy does with the values this resource wrote. `false` (the default): " +
					"destroy gives the fields back, so an Istio mesh returns to the operator's default trust domain " +
					"`cluster.local` (every workload identity changes: the plan warns) and a MeshTrust only this resource " +
					"describes is deleted. `true`: destroy leaves every value it wrote (trust domain, aliases, CA " +
					"certificates, CA address, CA bundles, mesh label) and the object itself in place, and hands their " +
					"ownership to the field manager `<field_manager>-kept` (the provider's `field_manager` with `-kept` " +
					"appended: `zerotrust-kept` by default), so the mesh " +
					"keeps running on its trust domain after Terraform forgets it. Like any destroy-time setting it must " +
					"be applied (be in the state) before the destroy. A later resource that writes other values to those " +
					"fields meets that field manager as a conflict: set `force_conflicts = true` once to take them over. " +
					"Defaults to `false`.",
			},
			"spiffe_id_prefix": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "`spiffe://<trust domain>/`: the prefix of every SPIFFE ID of the trust domain the " +
					"mesh runs on (`cluster.local` for an Istio object without one).",
			},
			"previous_trust_domains": schema.ListAttribute{
				ElementType:         types.StringType,
				Computed:            true,
				MarkdownDescription: "`istio_sail`: former trust domains kept as aliases by `keep_previous_as_alias`, oldest first.",
			},
			"effective_trust_domain_aliases": schema.ListAttribute{
				ElementType: types.StringType,
				Computed:    true,
				MarkdownDescription: "`istio_sail`: the aliases the mesh object holds: `trust_domain_aliases` followed by " +
					"`previous_trust_domains`.",
			},
		},
	}
}

// kumaObjectName derives a MeshTrust name from a trust domain the way Kuma
// names them (west.example.com: west-example-com); object names cannot hold
// the underscores trust domains may.
func kumaObjectName(trustDomain string) string {
	return strings.NewReplacer(".", "-", "_", "-").Replace(trustDomain)
}
