package datasources

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/spiffe/go-spiffe/v2/bundle/spiffebundle"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/spireexec"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

type trustBundleModel struct {
	TrustDomain types.String `tfsdk:"trust_domain"`
	Cluster     types.String `tfsdk:"cluster"`
	Timeout     types.String `tfsdk:"timeout"`
	// OnUnreachable is tbOnUnreachableError (null) or tbOnUnreachableWarn.
	OnUnreachable types.String `tfsdk:"on_unreachable"`
	Endpoint      types.Object `tfsdk:"endpoint"`
	Published     types.Object `tfsdk:"published"`
	ConfigMap     types.Object `tfsdk:"config_map"`
	SpireServer   types.Object `tfsdk:"spire_server"`

	SPIFFEBundle           types.String `tfsdk:"spiffe_bundle"`
	X509AuthoritiesPEM     types.String `tfsdk:"x509_authorities_pem"`
	JWTAuthorities         types.Map    `tfsdk:"jwt_authorities"`
	RefreshHint            types.Int64  `tfsdk:"refresh_hint"`
	SequenceNumber         types.Int64  `tfsdk:"sequence_number"`
	X509FingerprintsSHA256 types.List   `tfsdk:"x509_fingerprints_sha256"`
	ExpiresAt              types.String `tfsdk:"expires_at"`
}

type trustBundleEndpointModel struct {
	URL              types.String `tfsdk:"url"`
	Profile          types.String `tfsdk:"profile"`
	EndpointSPIFFEID types.String `tfsdk:"endpoint_spiffe_id"`
	BootstrapBundle  types.String `tfsdk:"bootstrap_bundle"`
	CACertificates   types.String `tfsdk:"ca_certificates"`
}

type trustBundlePublishedModel struct {
	URL            types.String `tfsdk:"url"`
	CACertificates types.String `tfsdk:"ca_certificates"`
}

type trustBundleConfigMapModel struct {
	Namespace  types.String `tfsdk:"namespace"`
	Name       types.String `tfsdk:"name"`
	Key        types.String `tfsdk:"key"`
	CheckSpire types.Bool   `tfsdk:"check_spire"`
}

func tbEndpointProfile(e trustBundleEndpointModel) string {
	if e.Profile.IsNull() {
		return spireexec.ProfileHTTPSSPIFFE
	}
	return e.Profile.ValueString()
}

// tbSetNoOutputs nulls every computed attribute: no bundle was read.
func tbSetNoOutputs(m *trustBundleModel) {
	m.SPIFFEBundle = types.StringNull()
	m.X509AuthoritiesPEM = types.StringNull()
	m.JWTAuthorities = types.MapNull(types.StringType)
	m.RefreshHint = types.Int64Null()
	m.SequenceNumber = types.Int64Null()
	m.X509FingerprintsSHA256 = types.ListNull(types.StringType)
	m.ExpiresAt = types.StringNull()
}

// tbSetOutputs fills the computed attributes from b.
func tbSetOutputs(ctx context.Context, m *trustBundleModel, b *spiffebundle.Bundle) diag.Diagnostics {
	var diags diag.Diagnostics
	normalized, err := trustbundle.Normalize(b)
	if err != nil {
		diags.AddError("Cannot Render the Trust Bundle", err.Error())
		return diags
	}
	m.SPIFFEBundle = types.StringValue(normalized)
	m.X509AuthoritiesPEM = types.StringValue(trustbundle.X509AuthoritiesPEM(b))
	jwt, d := types.MapValueFrom(ctx, types.StringType, trustbundle.JWTAuthorities(b))
	diags.Append(d...)
	m.JWTAuthorities = jwt
	fingerprints, d := types.ListValueFrom(ctx, types.StringType, trustbundle.FingerprintsSHA256(b))
	diags.Append(d...)
	m.X509FingerprintsSHA256 = fingerprints
	m.RefreshHint = types.Int64Null()
	if hint, ok := b.RefreshHint(); ok {
		m.RefreshHint = types.Int64Value(int64(hint / time.Second))
	}
	m.SequenceNumber = types.Int64Null()
	if seq, ok := b.SequenceNumber(); ok {
		if seq > math.MaxInt64 {
			diags.AddWarning("Sequence Number Out of Range",
				fmt.Sprintf("The bundle's sequence number %d does not fit a Terraform number exactly; sequence_number is null.", seq))
		} else {
			m.SequenceNumber = types.Int64Value(int64(seq))
		}
	}
	m.ExpiresAt = types.StringNull()
	if expiry, ok := trustbundle.EarliestExpiry(b); ok {
		m.ExpiresAt = types.StringValue(expiry.UTC().Format(time.RFC3339))
	}
	return diags
}
