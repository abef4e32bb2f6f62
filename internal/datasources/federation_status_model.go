package datasources

import (
	"context"
	"math"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/providerdata"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

type federationStatusModel struct {
	Cluster        types.String `tfsdk:"cluster"`
	SpireServer    types.Object `tfsdk:"spire_server"`
	CarriedBundles types.List   `tfsdk:"carried_bundles"`
	CheckEndpoints types.Bool   `tfsdk:"check_endpoints"`
	Federations    types.List   `tfsdk:"federations"`
	Workloads      types.List   `tfsdk:"workloads"`
	OK             types.Bool   `tfsdk:"ok"`
	Problems       types.List   `tfsdk:"problems"`
	Mermaid        types.String `tfsdk:"mermaid"`
}

// fsEntryModel is one element of `federations`.
type fsEntryModel struct {
	Cluster            types.String `tfsdk:"cluster"`
	TrustDomain        types.String `tfsdk:"trust_domain"`
	CFTDName           types.String `tfsdk:"cftd_name"`
	BundleEndpointURL  types.String `tfsdk:"bundle_endpoint_url"`
	Relationship       types.Bool   `tfsdk:"relationship"`
	Carried            types.Bool   `tfsdk:"carried"`
	BundleHeld         types.Bool   `tfsdk:"bundle_held"`
	SequenceNumber     types.Int64  `tfsdk:"sequence_number"`
	X509ExpiresAt      types.String `tfsdk:"x509_expires_at"`
	RefreshHintSeconds types.Int64  `tfsdk:"refresh_hint_seconds"`
	EndpointOK         types.Bool   `tfsdk:"endpoint_ok"`
	EndpointMatches    types.Bool   `tfsdk:"endpoint_matches"`
	PeerComparison     types.String `tfsdk:"peer_comparison"`
	CarriedBehind      types.Bool   `tfsdk:"carried_behind"`
	PeerActivatesAt    types.String `tfsdk:"peer_activates_at"`
	Problems           types.List   `tfsdk:"problems"`
}

// fsCarriedModel is one element of `carried_bundles`.
type fsCarriedModel struct {
	Cluster     types.String `tfsdk:"cluster"`
	TrustDomain types.String `tfsdk:"trust_domain"`
}

// carried is `carried_bundles` by cluster key.
func (m *federationStatusModel) carried(ctx context.Context) (map[string][]string, diag.Diagnostics) {
	var list []fsCarriedModel
	if m.CarriedBundles.IsNull() || m.CarriedBundles.IsUnknown() {
		return nil, nil
	}
	diags := m.CarriedBundles.ElementsAs(ctx, &list, false)
	out := map[string][]string{}
	for _, c := range list {
		key := providerdata.ClusterKey(c.Cluster)
		out[key] = append(out[key], c.TrustDomain.ValueString())
	}
	return out, diags
}

// setReport fills the computed attributes from r.
func (m *federationStatusModel) setReport(ctx context.Context, r fsReport) diag.Diagnostics {
	var diags diag.Diagnostics
	entries := make([]fsEntryModel, 0, len(r.Entries))
	problems := append([]string{}, r.ClusterProblems...)
	for _, e := range r.Entries {
		em, d := fsEntryToModel(ctx, e)
		diags.Append(d...)
		entries = append(entries, em)
		problems = append(problems, e.Problems...)
	}
	var d diag.Diagnostics
	m.Federations, d = types.ListValueFrom(ctx, types.ObjectType{AttrTypes: fsEntryAttrTypes()}, entries)
	diags.Append(d...)
	m.Workloads = fsWorkloadsValue(ctx, r.Workloads, &diags)
	for _, w := range r.Workloads {
		problems = append(problems, w.Problems...)
	}
	m.Problems, d = types.ListValueFrom(ctx, types.StringType, problems)
	diags.Append(d...)
	m.OK = types.BoolValue(len(problems) == 0)
	m.Mermaid = types.StringValue(r.mermaid())
	return diags
}

func fsEntryToModel(ctx context.Context, e fsEntry) (fsEntryModel, diag.Diagnostics) {
	m := fsEntryModel{
		Cluster:            types.StringValue(e.ClusterKey),
		TrustDomain:        types.StringValue(e.TrustDomain),
		CFTDName:           types.StringNull(),
		BundleEndpointURL:  types.StringNull(),
		Relationship:       types.BoolNull(),
		Carried:            types.BoolValue(e.Carried),
		BundleHeld:         types.BoolNull(),
		SequenceNumber:     types.Int64Null(),
		X509ExpiresAt:      types.StringNull(),
		RefreshHintSeconds: types.Int64Null(),
		EndpointOK:         types.BoolPointerValue(e.EndpointOK()),
		EndpointMatches:    types.BoolPointerValue(e.EndpointMatches()),
		PeerComparison:     types.StringNull(),
		CarriedBehind:      types.BoolNull(),
		PeerActivatesAt:    types.StringNull(),
	}
	if e.ClusterKey == kube.DefaultKey {
		m.Cluster = types.StringNull()
	}
	if len(e.CFTDs) > 0 {
		m.CFTDName = types.StringValue(e.CFTDs[0].Name)
	}
	if ep := e.endpoint(); ep != nil && ep.URL != "" {
		m.BundleEndpointURL = types.StringValue(ep.URL)
	}
	if e.Asked {
		m.Relationship = types.BoolValue(e.Relationship != nil)
		m.BundleHeld = types.BoolValue(e.Held != nil)
	}
	if b := e.Held; b != nil {
		if seq, ok := b.SequenceNumber(); ok && seq <= math.MaxInt64 {
			m.SequenceNumber = types.Int64Value(int64(seq))
		}
		if hint, ok := b.RefreshHint(); ok {
			m.RefreshHintSeconds = types.Int64Value(int64(hint / time.Second))
		}
		if expiry, ok := trustbundle.EarliestExpiry(b); ok {
			m.X509ExpiresAt = types.StringValue(expiry.UTC().Format(time.RFC3339))
		}
	}
	if p := e.Peer; p != nil {
		m.PeerComparison = types.StringValue(p.Comparison)
		if p.Comparison != peerNone {
			m.CarriedBehind = types.BoolValue(p.Comparison == peerBehind)
		}
		if p.ActivatesAt != nil {
			m.PeerActivatesAt = types.StringValue(p.ActivatesAt.UTC().Format(time.RFC3339))
		}
	}
	var diags diag.Diagnostics
	m.Problems, diags = types.ListValueFrom(ctx, types.StringType, append([]string{}, e.Problems...))
	return m, diags
}
