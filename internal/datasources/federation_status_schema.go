package datasources

import (
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireserverattr"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/validate"
)

func federationStatusSchema() schema.Schema {
	return schema.Schema{
		MarkdownDescription: "Whether federations work, per cluster and per federated trust domain, asked from the places " +
			"that decide it rather than from Terraform state: the cluster's `ClusterFederatedTrustDomain` objects, its " +
			"SPIRE server (pod exec of `spire-server federation list` and `spire-server bundle list`, see `spire_server`; with " +
			"`carried_bundles` also `bundle show` and `localauthority x509 show`), " +
			"and the peer's SPIFFE bundle endpoint (fetched with go-spiffe, authenticated as the federation says).\n\n" +
			"Made for `check {}` blocks: anything wrong is a line of `problems` and `ok` is false, never an error, so a " +
			"SPIRE server that cannot be asked or a peer endpoint that is down is reported, not fatal. Only bad input " +
			"(an unknown `cluster` key) is an error.\n\n" +
			"A trust domain is listed for a cluster when a ClusterFederatedTrustDomain declares it, SPIRE has a " +
			"federation relationship with it, or SPIRE holds its bundle. A bundle SPIRE still holds with neither (left " +
			"behind after a federation was removed without `delete_bundle_on_destroy`) is a problem: workloads keep " +
			"trusting that trust domain; unless `carried_bundles` names it, as a bundle Terraform carries " +
			"(`zerotrust_spire_bundle`), which SPIRE must hold and no relationship may refresh.",
		Attributes: map[string]schema.Attribute{
			"cluster": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "Key of the provider's `clusters` map naming the one cluster to check. Unset checks every " +
					"cluster of the provider: each key of `clusters`, and the `kubernetes` connection when it is configured " +
					"and reaches an API server none of the keys does (so no cluster is checked twice). A connection " +
					"Terraform does not know yet is skipped with a warning.",
			},
			"spire_server": spireserverattr.DataSourceAttribute("The SPIRE server pod asked through pod exec on every checked cluster (the credentials need " +
				"`get` on `pods` and `get` and `create` on `pods/exec` there). Unset, or `{}`, means the defaults."),
			"carried_bundles": schema.ListNestedAttribute{
				Optional: true,
				MarkdownDescription: "The bundles Terraform carries into SPIRE without a federation relationship " +
					"(`zerotrust_spire_bundle`), for example `[for b in zerotrust_spire_bundle.peer : { cluster = b.cluster, " +
					"trust_domain = b.trust_domain }]`. SPIRE holding one of them is expected; SPIRE not holding one, or a " +
					"relationship for the same trust domain, is a problem. Each one SPIRE holds is compared with the bundle " +
					"its peer's own SPIRE server publishes when the peer is among the checked clusters (see `peer_comparison`).",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"cluster": schema.StringAttribute{
						Optional:            true,
						MarkdownDescription: "Key of the provider's `clusters` map; unset for the `kubernetes` connection.",
					},
					"trust_domain": schema.StringAttribute{
						Required:            true,
						MarkdownDescription: "The trust domain whose bundle is carried.",
						Validators:          []validator.String{validate.TrustDomain()},
					},
				}},
			},
			"check_endpoints": schema.BoolAttribute{
				Optional: true,
				Computed: true,
				MarkdownDescription: "Also fetch each peer's bundle endpoint from where Terraform runs (one attempt, at most " +
					"15 seconds each) and compare what it serves with what SPIRE holds. Defaults to `true`; set `false` when " +
					"Terraform cannot reach the peers' endpoints (the `endpoint_*` attributes are then null).",
			},
			"federations": schema.ListNestedAttribute{
				Computed: true,
				MarkdownDescription: "One entry per cluster and federated trust domain, sorted by cluster, then trust domain. " +
					"Booleans that could not be found out (the SPIRE server did not answer, the endpoint was not checked) are null.",
				NestedObject: schema.NestedAttributeObject{Attributes: fsEntryAttributes()},
			},
			"workloads": fsWorkloadsAttribute(),
			"ok": schema.BoolAttribute{
				Computed: true,
				MarkdownDescription: "True when `problems` is empty: every federation found is declared, known to SPIRE, bundled and, when " +
					"checked, served by its peer, and the workloads of every ClusterSPIFFEID that federates carry the federation.",
			},
			"problems": schema.ListAttribute{
				Computed:    true,
				ElementType: types.StringType,
				MarkdownDescription: "Every problem of every entry (and of clusters that could not be checked at all), one " +
					"sentence each, starting with `<cluster>: <trust domain>: ` (`<cluster>: ` for a cluster that could not be " +
					"checked at all; the `kubernetes` connection is `default`); ready for `join(\"\\n\", ...)` as a check's " +
					"`error_message`. Empty when `ok`.",
			},
			"mermaid": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "The fleet's trust as a [Mermaid](https://mermaid.js.org) flowchart, for a " +
					"fenced code block of language `mermaid` in Markdown (GitHub, GitLab and most wikis draw it; `terraform output -raw` " +
					"prints it as it is): " +
					"each checked cluster is a node with its trust domain (as its SPIRE server states it), and each entry of " +
					"`federations` an edge from the cluster that trusts to the cluster it trusts (to the trust domain alone " +
					"when no checked cluster is of it), labelled with its health and coloured by it: `ok` (green), the first " +
					"thing wrong and how many more problems it has, such as `no bundle`, `endpoint down` or `leftover bundle` " +
					"(red), or `SPIRE not asked` (grey, dashed). A cluster that does not answer is a dashed node marked " +
					"`not checked`. The same fleet in the same state draws the same text.",
			},
		},
	}
}

func fsEntryAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"cluster": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "Key of the provider's `clusters` map; null for the `kubernetes` connection.",
		},
		"trust_domain": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "The federated (peer) trust domain.",
		},
		"cftd_name": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "Name of the ClusterFederatedTrustDomain that declares the trust domain; null when none does.",
		},
		"bundle_endpoint_url": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "The peer's bundle endpoint as SPIRE's federation relationship has it, else as the " +
				"ClusterFederatedTrustDomain declares it; null when neither exists.",
		},
		"relationship": schema.BoolAttribute{
			Computed: true,
			MarkdownDescription: "SPIRE has a federation relationship with the trust domain (`spire-server federation list`); " +
				"spire-controller-manager creates it from the ClusterFederatedTrustDomain. Null when SPIRE could not be asked.",
		},
		"carried": schema.BoolAttribute{
			Computed:            true,
			MarkdownDescription: "`carried_bundles` names the trust domain on this cluster: Terraform carries its bundle.",
		},
		"bundle_held": schema.BoolAttribute{
			Computed: true,
			MarkdownDescription: "SPIRE holds the trust domain's bundle (`spire-server bundle list`), so its workloads can " +
				"verify the peer's SVIDs. Null when SPIRE could not be asked.",
		},
		"sequence_number": schema.Int64Attribute{
			Computed:            true,
			MarkdownDescription: "Sequence number of the bundle SPIRE holds; null when it holds none or does not say.",
		},
		"x509_expires_at": schema.StringAttribute{
			Computed:            true,
			MarkdownDescription: "When the first X.509 authority of the bundle SPIRE holds expires (RFC 3339, UTC); null when it holds none.",
		},
		"refresh_hint_seconds": schema.Int64Attribute{
			Computed: true,
			MarkdownDescription: "Refresh hint of the bundle SPIRE holds, in seconds, as the peer's endpoint last served it; " +
				"null when it holds none or none was given (a bootstrap bundle carries none).",
		},
		"endpoint_ok": schema.BoolAttribute{
			Computed: true,
			MarkdownDescription: "The peer's bundle endpoint answered with a bundle of the trust domain, authenticated as the " +
				"federation says: for `https_spiffe`, an SVID for its endpoint SPIFFE ID verified with the bundle SPIRE holds " +
				"(or, when it holds none, the ClusterFederatedTrustDomain's bootstrap bundle); for `https_web`, the system " +
				"roots. Null when not checked (`check_endpoints = false`, no endpoint known, or nothing to authenticate it with).",
		},
		"endpoint_matches": schema.BoolAttribute{
			Computed: true,
			MarkdownDescription: "The endpoint serves exactly the X.509 authorities SPIRE holds. Shortly after a CA rotation it " +
				"may be false until SPIRE refreshes (see `refresh_hint_seconds`). Null unless the endpoint answered and SPIRE holds a bundle.",
		},
		"peer_comparison": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "For a carried bundle SPIRE holds: how it compares, by X.509 and JWT authorities (never by " +
				"sequence number or key order), with the bundle the peer's own SPIRE server publishes now (pod exec of " +
				"`spire-server bundle show` on the checked cluster whose trust domain it is, never its bundle endpoint). " +
				"`matches`: the same authorities. `behind`: the peer publishes authorities it lacks, such as a prepared " +
				"X.509 or JWT authority (a problem: apply before the peer activates it, see `peer_activates_at`). " +
				"`differs`: it lacks none but still trusts authorities the peer no longer publishes (revoked or expired; " +
				"a problem when an unexpired X.509 authority was revoked). `no_peer`: no checked cluster is of the trust " +
				"domain, so it cannot be compared (check every cluster, with `cluster` unset, to compare). Null when the " +
				"bundle is not carried, SPIRE does not hold it or could not be asked, or a checked cluster's SPIRE server " +
				"could not say what it publishes (that cluster may be the peer).",
		},
		"carried_behind": schema.BoolAttribute{
			Computed: true,
			MarkdownDescription: "`peer_comparison` is `behind`: the carried bundle lacks authorities its peer publishes " +
				"and the next apply of `zerotrust_spire_bundle` would add. Null when `peer_comparison` is null or `no_peer`.",
		},
		"peer_activates_at": schema.StringAttribute{
			Computed: true,
			MarkdownDescription: "For a carried bundle compared with its peer: when the peer's SPIRE server activates its " +
				"next X.509 authority on its own schedule (RFC 3339, UTC), as SPIRE's CA manager derives it from the active " +
				"authority: its expiry minus a sixth of its lifetime, at most 7 days (5/6 of `ca_ttl` up to a `ca_ttl` of 42 " +
				"days). The peer prepares that authority at half the lifetime (at most 30 days before expiry): an apply " +
				"between the two keeps every pair working. An operator's `spire-server localauthority x509 activate` can " +
				"come earlier. Null when not compared, or when the active authority is not in the peer's bundle (an " +
				"upstream authority signs it).",
		},
		"problems": schema.ListAttribute{
			Computed:            true,
			ElementType:         types.StringType,
			MarkdownDescription: "What is wrong with this federation, one sentence each; empty when nothing is.",
		},
	}
}

// fsEntryAttrTypes are the attribute types of one `federations` entry, read
// from the schema once.
var fsEntryAttrTypes = sync.OnceValue(func() map[string]attr.Type {
	nested, ok := federationStatusSchema().Attributes["federations"].(schema.ListNestedAttribute)
	if !ok {
		panic("federation_status: federations is not a list of objects")
	}
	t, ok := nested.NestedObject.Type().(attr.TypeWithAttributeTypes)
	if !ok {
		panic("federation_status: a federations entry is not an object")
	}
	return t.AttributeTypes()
})
