package resources

import (
	"context"
	"regexp"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spirefacts"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// acmeEmail is the released SpireServer CRD's pattern for acme.email, as
// published, so the plan refuses exactly what the API server would.
var acmeEmail = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._%+-]*[a-zA-Z0-9]@[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*\.[a-zA-Z]{2,}$`)

// federationProfiles are the bundle endpoint profiles, of this cluster's
// endpoint and of a peer's.
var federationProfiles = []string{spireexec.ProfileHTTPSSPIFFE, spireexec.ProfileHTTPSWeb}

func (r *spireFederationResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = spireFederationSchema()
}

// federationObjectTypes are the attribute types of the nested objects, for
// the null and known object values the model builds.
type federationObjectTypes struct {
	bundleEndpoint, httpsWeb, acme, servingCert, peer, timeouts map[string]attr.Type
}

// federationTypes reads the nested object types from the schema (through
// schemaTypesOf), the one place they are declared, so the model's values
// cannot drift from it.
var federationTypes = sync.OnceValue(func() federationObjectTypes {
	of := schemaTypesOf(func() attr.Type { return spireFederationSchema().Type() })
	return federationObjectTypes{
		bundleEndpoint: of("bundle_endpoint"),
		httpsWeb:       of("bundle_endpoint", "https_web"),
		acme:           of("bundle_endpoint", "https_web", "acme"),
		servingCert:    of("bundle_endpoint", "https_web", "serving_cert"),
		peer:           of("federates_with"),
		timeouts:       of("timeouts"),
	}
})

// spireFederationSchema is the resource schema; federationTypes reads the
// nested object types from it.
func spireFederationSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "SPIRE federation settings of one cluster: `spec.federation` of the SpireServer `cluster` " +
			"(`operator.openshift.io/v1alpha1`, cluster-scoped) of the OpenShift Zero Trust Workload Identity Manager. " +
			"The provider writes only `spec.federation`, by server-side apply; the operator creates the SpireServer " +
			"itself, and it must exist before apply.\n\n" +
			"The operator refuses to remove `spec.federation` once it is set and to change the bundle endpoint " +
			"`profile`. Destroying this resource therefore releases only the `federates_with` entries, leaves the bundle " +
			"endpoint in place with a warning, and forgets the resource. A profile change is refused at plan.\n\n" +
			"`federates_with` becomes static SPIRE server configuration. `zerotrust_federated_trust_domain` " +
			"(ClusterFederatedTrustDomain) is the dynamic alternative, which needs no SPIRE server restart.\n\n" +
			federationSourcesDoc + "\n\n" +
			"On a cluster whose `spire.install` is `helm` (the provider's `spire`, or the cluster's own) the plan " +
			"refuses this resource: the SPIFFE Helm chart has no SpireServer, its values set the bundle endpoint " +
			"(spire-server `federation.enabled`, published by `federation.ingress.enabled` or a Service), and its " +
			"federation relationships are `zerotrust_federated_trust_domain` objects.\n\n" +
			"Attributes whose CRD field has a default (`profile`, `refresh_hint`, `managed_route`, `tos_accepted`, " +
			"`file_sync_interval`) plan that default when unset, but are sent only when configured: the API server " +
			"fills in the rest, so importing a SpireServer someone else set up plans no change and writes nothing.\n\n" +
			"**Differences from the federation enhancement proposal.** This resource follows the released " +
			"SpireServer CRD, not the proposal it grew from. The proposal's `bundleEndpoint.port`, " +
			"`bundleEndpoint.address` and `servingCert.secretName` never shipped, so they are not offered (the API " +
			"server refuses them as \"field not declared in schema\"). The released operator serves the endpoint on " +
			"its fixed port and publishes it through the OpenShift Route `spire-server-federation` in its namespace, " +
			"host `federation.<trust domain>` (with `managed_route = true`); `bundle_endpoint_url` reads that Route. " +
			"`federatesWith` is an atomic list in the released CRD, not a map keyed by trust domain: whoever " +
			"writes it writes all of it.\n\n" +
			"**What the operator does with it.** The operator validates `spec.federation` when it reconciles (it " +
			"sets no `observedGeneration`, so a change is followed through its conditions' transitions). A refused " +
			"configuration sets `ConfigurationValid=False` and `Ready=False`, and the operator stops reconciling the " +
			"SpireServer without retrying: nothing else in it is rolled out until it changes again. The rules it " +
			"checks that the API server does not (`tos_accepted`, at most 50 peers, no peer for the own trust " +
			"domain, lower-case `https://`) are refused at plan. After each create and update the resource waits " +
			"(see `timeouts`) for the operator's verdict on the change: `Ready=True`, or, with `managed_route = " +
			"false`, the `Ready=False` that this choice always brings; a refusal fails the apply with the operator's " +
			"message. With `managed_route = true` on a cluster that serves Routes it also waits for the Route, so " +
			"`bundle_endpoint_url` is known when the apply returns.\n\n" +
			"**A failed apply never tears the federation down.** A refusal (also one about a field this resource " +
			"does not manage, such as `jwtIssuer`) or a timeout after the write ends the apply with an error, and the " +
			"cluster keeps what was written. A failed update keeps that in state, and the next apply changes only what " +
			"the configuration changes. A failed create records nothing in state: Terraform would taint it and replace " +
			"it on the next apply, and the destroy half of that replacement would release `federates_with`, so that " +
			"the operator could restart SPIRE without any peer until the create half wrote them again. The next apply " +
			"instead creates the resource again by writing the same fields, which changes nothing already on the " +
			"cluster: the configuration the operator renders keeps every peer throughout. To give up on a failed " +
			"create instead, import the resource and destroy it.\n\n" +
			"**Peers SPIRE holds no bundle of.** A plan of an existing resource asks the cluster's SPIRE server " +
			"(`spire-server bundle list` in its pod, from the cluster's `spire` settings, once per cluster and " +
			"Terraform operation, shared with `zerotrust_federated_trust_domain`'s `spire_trust`) whether it holds the " +
			"bundle of each `federates_with` entry applied more than a minute ago, and warns, naming the trust domain " +
			"and the cluster, for each one it does not hold: a relationship in the server configuration has no " +
			"bootstrap bundle that anything re-seeds, so an `https_spiffe` peer cannot be fetched at all, and " +
			"workloads of that trust domain are not trusted. When SPIRE cannot be asked the plan says nothing of it. " +
			"This is a warning, not an attribute: SPIRE fetches bundles on its own schedule, and an attribute " +
			"following it would change between plans without any change of the configuration.",
		Attributes: map[string]schema.Attribute{
			"id":              idAttribute("`cluster` on the default connection, `<cluster>/cluster` otherwise; also the import ID."),
			"cluster":         clusterAttribute(),
			"bundle_endpoint": bundleEndpointAttribute(),
			"managed_route": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				// No static default: unset, it is not sent, so the object keeps
				// whatever another manager (the operator's administrator) set;
				// planning the CRD's default would then never converge.
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.UseStateForUnknown()},
				MarkdownDescription: "Whether the operator creates the OpenShift Route `" + spirefacts.FederationRouteName +
					"` exposing the bundle endpoint (the CRD's string `managedRoute`, `\"true\"`/`\"false\"`), in the " +
					"namespace `" + spirefacts.RouteNamespace + "`, host `federation.<trust domain>`. Sent only when set; " +
					"unset, it reads the object's value (the CRD's default `true` when nobody set it).\n\n" +
					"With `false` the operator reports `RouteAvailable=False` (`FederationRouteDisabled`) and therefore " +
					"`Ready=False` for good, and the ZeroTrustWorkloadIdentityManager reports its operands not ready; the " +
					"plan warns, and the SPIRE server still runs. The operator never deletes a Route it made earlier, so " +
					"after applying `false` this provider deletes the Route `" + spirefacts.FederationRouteName + "` in `" +
					spirefacts.RouteNamespace + "` if it carries the operator's label `" + spirefacts.OperatorManagedByLabel +
					"=" + spirefacts.OperatorManagedByValue + "` (a Route of your own under that name is never touched), " +
					"and `bundle_endpoint_url` becomes null.",
			},
			"federates_with": schema.MapNestedAttribute{
				Optional: true,
				MarkdownDescription: "Peer trust domains this SPIRE server federates with, keyed by trust domain (so order " +
					"never matters). At most 50 entries (the operator refuses more, whatever the CRD says), or the " +
					"provider's `max_federated_trust_domains` when lower. No entry may name this cluster's own trust domain, nor one a " +
					"`zerotrust_federated_trust_domain` of the cluster federates with (refused at plan: this entry would override it). The released CRD keeps `federatesWith` as one atomic list: " +
					"when this attribute is set, the resource owns the whole list, and entries someone else added show " +
					"up as changes to remove (applying over another field manager's list needs `force_conflicts`). Leave " +
					"it unset to leave the list alone.",
				Validators: []validator.Map{mapvalidator.KeysAre(validate.TrustDomain())},
				NestedObject: schema.NestedAttributeObject{
					Attributes: map[string]schema.Attribute{
						"bundle_endpoint_url": schema.StringAttribute{
							Required:            true,
							MarkdownDescription: "The peer's bundle endpoint: an `https://` URL with a host and no user info.",
							Validators:          []validator.String{validate.HTTPSURL()},
						},
						"bundle_endpoint_profile": schema.StringAttribute{
							Required:            true,
							MarkdownDescription: "How the peer's endpoint authenticates: `https_spiffe` (needs `endpoint_spiffe_id`) or `https_web`.",
							Validators:          []validator.String{stringvalidator.OneOf(federationProfiles...)},
						},
						"endpoint_spiffe_id": schema.StringAttribute{
							Optional: true,
							MarkdownDescription: "SPIFFE ID of the peer's bundle endpoint, usually `spiffe://<trust domain>/spire/server`. " +
								"Required for `https_spiffe`, refused for `https_web`.",
							Validators: []validator.String{validate.SPIFFEID()},
						},
					},
				},
			},
			"force_conflicts": forceConflictsAttribute(),
			"trust_domain": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "This cluster's trust domain, from the ZeroTrustWorkloadIdentityManager `cluster` " +
					"(`spec.trustDomain`) or, on older operators, the SpireServer.",
			},
			"endpoint_spiffe_id": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "SPIFFE ID this cluster's bundle endpoint presents: `spiffe://<trust_domain>/spire/server`.",
			},
			"bundle_endpoint_url": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "Where peers reach this cluster's bundle endpoint: `https://<host>` of the Route " +
					"`" + spirefacts.FederationRouteName + "` that the operator creates with `managed_route = true`, read in " +
					"the namespace `" + spirefacts.RouteNamespace + "` (the operator's constant, whatever the provider's " +
					"`spire.namespace`). The operator creates the Route at the end of the reconcile that follows a change; " +
					"create and update wait for it, so the value is known when they return. Null where Routes are not " +
					"served (not OpenShift), with `managed_route = false` (unless a Route of your own has that name), or " +
					"while the Route does not exist; the SpireServer itself does not say where its endpoint is reachable.",
			},
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(context.Background(), timeouts.Opts{
				Create: true, Update: true,
				CreateDescription: "How long create waits for the operator's verdict (and the federation Route), as a Go " +
					"duration. Defaults to `" + federationDefaultTimeout.String() + "`.",
				UpdateDescription: "How long update waits for the operator's verdict (and the federation Route), as a Go " +
					"duration. Defaults to `" + federationDefaultTimeout.String() + "`.",
			}),
		},
	}
}

// bundleEndpointAttribute is bundle_endpoint. Its default is an object of
// the attribute's own type, so the type is read from the attribute built
// without it.
func bundleEndpointAttribute() schema.SingleNestedAttribute {
	be := schema.SingleNestedAttribute{
		Optional: true,
		Computed: true,
		MarkdownDescription: "How this cluster's SPIRE server serves its trust bundle to peers. Defaults to " +
			"`{ profile = \"https_spiffe\", refresh_hint = 300 }`.",
		Attributes: map[string]schema.Attribute{
			"profile": schema.StringAttribute{
				Optional: true,
				Computed: true,
				Default:  stringdefault.StaticString(spireexec.ProfileHTTPSSPIFFE),
				MarkdownDescription: "`https_spiffe` (peers authenticate the endpoint by its SPIFFE ID, " +
					"`spiffe://<trust domain>/spire/server`) or `https_web` (a Web PKI certificate; needs `https_web`). " +
					"Defaults to `https_spiffe`. Cannot change once set: the operator forbids it, and a change is " +
					"refused at plan.",
				Validators: []validator.String{stringvalidator.OneOf(federationProfiles...)},
			},
			"refresh_hint": schema.Int64Attribute{
				Optional:            true,
				Computed:            true,
				Default:             int64default.StaticInt64(defaultRefreshHint),
				MarkdownDescription: "Seconds peers should wait before fetching the bundle again, 60 to 3600. Defaults to `300`.",
				Validators:          []validator.Int64{int64validator.Between(60, 3600)},
			},
			"https_web": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "Web PKI certificate of the endpoint; required with `profile = \"https_web\"`, " +
					"refused otherwise. Exactly one of `acme` or `serving_cert`; the operator forbids switching " +
					"between them later.",
				Attributes: map[string]schema.Attribute{
					"acme": schema.SingleNestedAttribute{
						Optional:            true,
						MarkdownDescription: "Obtain the certificate from an ACME CA (for example Let's Encrypt).",
						Validators: []validator.Object{
							objectvalidator.ExactlyOneOf(path.MatchRoot("bundle_endpoint").AtName("https_web").AtName("serving_cert")),
						},
						Attributes: map[string]schema.Attribute{
							"directory_url": schema.StringAttribute{
								Required: true,
								MarkdownDescription: "ACME directory URL, starting with lower-case `https://` (the CRD's pattern " +
									"and the operator compare case-sensitively).",
								Validators: []validator.String{validate.HTTPSURL()},
							},
							"domain_name": schema.StringAttribute{
								Required: true,
								MarkdownDescription: "Domain name the certificate is issued for. It should be " +
									"`federation.<trust domain>`, the host of the operator's passthrough Route: SPIRE answers " +
									"the ACME challenge only for TLS connections that name `domain_name`, and the Route hands " +
									"it only connections for its own host. The operator does not check this; the plan warns " +
									"when the trust domain is known and the name differs.",
								Validators: []validator.String{stringvalidator.LengthAtLeast(1)},
							},
							"email": schema.StringAttribute{
								Required:            true,
								MarkdownDescription: "Contact email of the ACME account (the CRD's email pattern).",
								Validators: []validator.String{
									stringvalidator.RegexMatches(acmeEmail, "must be an email address such as admin@example.com"),
								},
							},
							"tos_accepted": schema.BoolAttribute{
								Optional: true,
								Computed: true,
								Default:  booldefault.StaticBool(false),
								MarkdownDescription: "Whether you accept the ACME CA's terms of service (the CRD's string " +
									"`tosAccepted`, `\"true\"`/`\"false\"`). Must be `true`: the operator refuses ACME " +
									"otherwise (\"tosAccepted must be true to use ACME\") and stops reconciling the " +
									"SpireServer, so the plan refuses it. Defaults to `false` (the CRD's default); sent only when set.",
							},
						},
					},
					"serving_cert": schema.SingleNestedAttribute{
						Optional:            true,
						MarkdownDescription: "Serve a certificate you provide.",
						Attributes: map[string]schema.Attribute{
							"file_sync_interval": schema.Int64Attribute{
								Optional: true,
								Computed: true,
								Default:  int64default.StaticInt64(defaultFileSyncInterval),
								MarkdownDescription: "Seconds between reloads of the certificate files, 3600 (1h) to 7776000 (90d). " +
									"Defaults to `86400`; sent only when set.",
								Validators: []validator.Int64{int64validator.Between(3600, 7776000)},
							},
							"external_secret_ref": schema.StringAttribute{
								Optional: true,
								MarkdownDescription: "Secret (`tls.crt`, `tls.key`) holding the certificate for the federation " +
									"Route's host `federation.<trust domain>`; a Kubernetes object name. The operator only hands " +
									"it to its re-encrypting Route (`tls.externalCertificate`); the SPIRE server itself always " +
									"serves the service-CA certificate `spire-server-serving-cert`. Without it, https_web peers " +
									"see the router's default certificate, and the plan warns. The operator checks neither its " +
									"format nor that it exists.",
								Validators: []validator.String{validate.K8sName()},
							},
						},
					},
				},
			},
		},
	}
	attrTypes := objectAttrTypes(be.GetType())
	be.Default = objectdefault.StaticValue(types.ObjectValueMust(attrTypes, map[string]attr.Value{
		"profile":      types.StringValue(spireexec.ProfileHTTPSSPIFFE),
		"refresh_hint": types.Int64Value(defaultRefreshHint),
		"https_web":    types.ObjectNull(objectAttrTypes(attrTypes["https_web"])),
	}))
	return be
}
