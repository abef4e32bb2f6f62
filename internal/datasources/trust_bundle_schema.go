package datasources

import (
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/bundlesource"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

// trustBundleSchema is the data source schema; the defaults it states are
// the ones Read applies.
func trustBundleSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "Reads the SPIFFE trust bundle of one trust domain from exactly one source: the trust domain's " +
			"federation bundle endpoint (`endpoint`), the bundle ConfigMap its SPIRE server keeps current (`config_map`), " +
			"the SPIRE server itself through pod exec of `spire-server bundle show -format spiffe` (`spire_server`), or the " +
			"object a SPIRE BundlePublisher writes to S3, GCS or Azure Blob Storage (`published`). " +
			"This is how peers get each other's bundles without copying them by hand: pass `spiffe_bundle` to " +
			"`zerotrust_federated_trust_domain.trust_domain_bundle` on the other clusters.\n\n" +
			"The source is retried with backoff until `timeout` (a SPIRE server restarting after a federation change is " +
			"normal). The bundle is then checked: a bundle of another trust domain, or one whose X.509 authorities have all " +
			"expired, is an error. `spiffe_bundle` is normalised (stable key and key-set order), so reading an unchanged " +
			"bundle again never shows a difference in a plan.\n\n" +
			"What each source carries: the endpoint serves the full bundle with its refresh hint; `bundle show` and a " +
			"`bundle.spiffe` ConfigMap key (SPIRE's BundlePublisher `k8s_configmap`, the Helm chart's default) carry " +
			"authorities and sequence number, and the key a refresh hint only when the publisher's `refresh_hint` is set; " +
			"a `bundle.crt` (PEM) ConfigMap key (SPIRE's Notifier `k8sbundle`, the operator's) carries only the X.509 " +
			"authorities; a published object carries what `bundle show` does, plus the publisher's `refresh_hint` when set.",
		Attributes: map[string]schema.Attribute{
			"trust_domain": schema.StringAttribute{
				Required: true,
				MarkdownDescription: "The trust domain whose bundle to read, e.g. `west.example.org` (no `spiffe://`). " +
					"The bundle read must belong to it.",
				Validators: []validator.String{validate.TrustDomain()},
			},
			"cluster": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Key of the provider's `clusters` map naming the cluster that `config_map` or " +
					"`spire_server` is read from. Unset means the provider's `kubernetes` connection. Not used by `endpoint` and `published`.",
			},
			"timeout": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "How long to keep retrying the source before failing, as a duration such as `30s` or " +
					"`5m`. Defaults to `2m`.",
				Validators: []validator.String{validate.Duration()},
			},
			"on_unreachable": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "What a read from `config_map` or `spire_server` does when the cluster does not answer " +
					"at all (no connection, no TLS handshake, no response within 3s): `" + tbOnUnreachableError + "` " +
					"fails, `" + tbOnUnreachableWarn + "` gives a warning naming the cluster, its address and the " +
					"error, and leaves every output null. A `zerotrust_spire_bundle` given that null bundle keeps the " +
					"bundle it carried last, so one cluster down does not stop Terraform carrying the others' bundles. " +
					"A cluster that answers with an error (no permission, no SPIRE pod) fails the read either way. Unset: " +
					"the cluster's `on_unreachable` in the provider's `clusters`, else the provider's (`warn` by default). " +
					"Not used by `endpoint` and `published`.",
				Validators: []validator.String{
					stringvalidator.OneOf(tbOnUnreachableError, tbOnUnreachableWarn),
					stringvalidator.ConflictsWith(path.MatchRoot("endpoint"), path.MatchRoot("published")),
				},
			},
			"endpoint": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "Read the bundle from the trust domain's SPIFFE federation bundle endpoint.",
				Attributes: map[string]schema.Attribute{
					"url": schema.StringAttribute{
						Required:            true,
						MarkdownDescription: "The bundle endpoint URL, e.g. `https://spire-bundle.west.example.org:8443`.",
						Validators:          []validator.String{validate.HTTPSURL()},
					},
					"profile": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "How the endpoint authenticates: `https_spiffe` (default; it presents an " +
							"X.509-SVID for `endpoint_spiffe_id`, checked against `bootstrap_bundle`) or `https_web` (a Web PKI " +
							"certificate, checked against `ca_certificates` or the system roots).",
						Validators: []validator.String{stringvalidator.OneOf(spireexec.ProfileHTTPSSPIFFE, spireexec.ProfileHTTPSWeb)},
					},
					"endpoint_spiffe_id": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "SPIFFE ID the endpoint must present, usually `spiffe://<trust_domain>/spire/server`. " +
							"Required for `https_spiffe`, refused for `https_web`.",
						Validators: []validator.String{validate.SPIFFEID()},
					},
					"bootstrap_bundle": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "A SPIFFE bundle (JSON) of the endpoint SPIFFE ID's trust domain that verifies the " +
							"endpoint's certificate, for example an earlier read of this data source from another source. " +
							"Required for `https_spiffe`, refused for `https_web`.",
					},
					"ca_certificates": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "PEM CA certificates that verify an `https_web` endpoint. Unset means the system " +
							"roots. Refused for `https_spiffe`.",
						Validators: []validator.String{validate.PEMCertificates()},
					},
				},
			},
			"published": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "Read the bundle a SPIRE server's BundlePublisher `aws_s3`, `gcp_cloudstorage` or " +
					"`azure_blob` writes to object storage, as a peer's SPIRE reads it with the `https_web` profile: an " +
					"HTTPS GET of the object (`zerotrust_spire_server`'s `bundle_publishers[*].url`), verified with Web " +
					"PKI. The object must be in the SPIFFE bundle format (the publisher's `format = \"spiffe\"`); PEM " +
					"and JWKS objects are refused, named. A store that does not answer, or answers 5xx or 429, is retried " +
					"until `timeout`; a 403 (the object is not publicly readable), a 404 (no such bucket or object) and any " +
					"other 4xx fail at once, naming the answer. This is how a peer bootstraps a federation through a " +
					"published bundle: pass `spiffe_bundle` to `zerotrust_federated_trust_domain.trust_domain_bundle`.",
				Attributes: map[string]schema.Attribute{
					"url": schema.StringAttribute{
						Required: true,
						MarkdownDescription: "The object's `https://` URL, e.g. " +
							"`https://bundles.s3.eu-west-1.amazonaws.com/west.example.org/bundle.json`.",
						Validators: []validator.String{validate.HTTPSURL()},
					},
					"ca_certificates": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "PEM CA certificates that verify the object store's certificate, for a private " +
							"store (an S3-compatible server with its own CA). Unset means the system roots, which verify " +
							"S3, GCS and Azure Blob Storage.",
						Validators: []validator.String{validate.PEMCertificates()},
					},
				},
			},
			"config_map": schema.SingleNestedAttribute{
				Optional: true,
				MarkdownDescription: "Read the bundle from the ConfigMap the SPIRE server publishes it in: its BundlePublisher " +
					"`k8s_configmap` writes SPIFFE bundle JSON under `" + bundlesource.KeySPIFFE + "` (the SPIFFE Helm chart's " +
					"default, `bundlePublisher.k8sConfigMap`), its Notifier `k8sbundle` writes PEM certificates under `" +
					bundlesource.KeyPEM + "` (what the operator renders, and the chart with `notifier.k8sBundle`). Both are " +
					"read. `config_map = {}` reads the defaults; `zerotrust_spire_server` reports the ConfigMap, namespace and " +
					"key a cluster's SPIRE server publishes to.",
				Attributes: map[string]schema.Attribute{
					"namespace": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "Namespace of the ConfigMap. Defaults to the cluster's `spire.bundle_namespace` (its own `spire`, else " +
							"the provider's): the SPIRE namespace for the operator, `spire-system` for the Helm chart.",
						Validators: []validator.String{validate.DNSLabel()},
					},
					"name": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Name of the ConfigMap. Defaults to `" + providerdata.SpireBundleConfigMap + "`, the name both installs use.",
						Validators:          []validator.String{validate.K8sName()},
					},
					"key": schema.StringAttribute{
						Optional: true,
						MarkdownDescription: "Key holding the bundle, as SPIFFE bundle JSON or PEM certificates (detected from " +
							"the content). Unset reads whichever of `" + bundlesource.KeySPIFFE + "` and `" + bundlesource.KeyPEM +
							"` the ConfigMap has; when it has both (one plugin replaced by the other leaves its key behind) they " +
							"must hold the same X.509 authorities, and `" + bundlesource.KeySPIFFE + "`, which also carries the JWT " +
							"authorities, is read. The read fails, naming the ConfigMap, its keys, who wrote each (its managed " +
							"fields) and which plugin writes which key, when it has neither key (after `timeout`: SPIRE may not " +
							"have written it yet), when the two disagree, or when a value is not a bundle of `trust_domain`.",
						Validators: []validator.String{validate.ConfigMapKey()},
					},
					"check_spire": schema.BoolAttribute{
						Optional: true,
						MarkdownDescription: "Compare the ConfigMap with the bundle the SPIRE server itself holds (pod exec of " +
							"`spire-server bundle show -format spiffe` in the cluster's SPIRE server pod and container (its " +
							"`spire` settings: `spire-server-0`, container `spire-server`, for the operator), in the cluster's " +
							"`spire.namespace` when the ConfigMap is in its `spire.bundle_namespace`, else in the ConfigMap's " +
							"namespace; the credentials need `get` on `pods` and `get` and `create` on `pods/exec` there). Defaults to `true`. SPIRE's " +
							"Notifier `k8sbundle` rewrites the ConfigMap when SPIRE prepares an authority but not when it revokes " +
							"one, so its ConfigMap can carry a revoked authority for as long as nothing else changes the bundle; " +
							"the BundlePublisher `k8s_configmap` publishes at the revoke too (and compares every 30 seconds), so " +
							"its ConfigMap holds a revoked authority only while a publish fails. The warnings name which plugin " +
							"wrote the key read, from the ConfigMap's managed fields. Authorities the ConfigMap holds and SPIRE " +
							"does not are left out of every output, with a warning naming them and why they were there: SPIRE " +
							"revoked them (its previous authority, asked with `spire-server localauthority x509 show` and " +
							"`localauthority jwt show`), or SPIRE never held them and the ConfigMap may have been altered; " +
							"where the previous authorities cannot be asked, the warning names both causes. Authorities SPIRE holds " +
							"and the ConfigMap does not yet are a warning. Where SPIRE cannot be asked (no pod, no right to " +
							"exec) the bundle is the ConfigMap's as read, with a warning; set `false` to trust the ConfigMap " +
							"without asking, for example where the provider's credentials may not exec into SPIRE's pods.",
					},
				},
			},
			"spire_server": spireserverattr.DataSourceAttribute("Ask the SPIRE server itself: pod exec of `spire-server bundle show -format spiffe` " +
				"through the API server (the credentials need `get` on `pods` and `get` and `create` on `pods/exec`). `spire_server = {}` reads the defaults."),
			"spiffe_bundle": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "The bundle as SPIFFE bundle JSON, normalised (members sorted, keys ordered by use, key " +
					"ID and certificate), ready for `zerotrust_federated_trust_domain.trust_domain_bundle`.",
			},
			"x509_authorities_pem": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "The X.509 authorities as PEM certificates, oldest first.",
			},
			"jwt_authorities": schema.MapAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "The JWT authorities: key ID to PEM public key.",
			},
			"refresh_hint": schema.Int64Attribute{
				Computed: true,
				MarkdownDescription: "How often, in seconds, the bundle's publisher asks peers to refresh it; null when the " +
					"source does not say (bundle endpoints do, and published objects and `bundle.spiffe` keys whose publisher sets `refresh_hint`).",
			},
			"sequence_number": schema.Int64Attribute{
				Computed:            true,
				MarkdownDescription: "The bundle's sequence number (it grows with each change); null when the source does not say.",
			},
			"x509_fingerprints_sha256": schema.ListAttribute{
				Computed:            true,
				ElementType:         types.StringType,
				MarkdownDescription: "Lowercase hex SHA-256 fingerprints of the X.509 authorities, sorted.",
			},
			"expires_at": schema.StringAttribute{
				Computed:            true,
				MarkdownDescription: "When the first X.509 authority expires (RFC 3339, UTC).",
			},
		},
	}
}
