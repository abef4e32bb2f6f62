package validate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// SPIFFEBundleFor accepts a SPIFFE bundle JSON document for the trust domain
// held by the attribute at trustDomain, an absolute expression such as
// path.MatchRoot("trust_domain") or one relative to the validated attribute
// such as path.MatchRelative().AtParent().AtName("trust_domain"). The bundle
// must parse with go-spiffe and pass trustbundle.Check at validation time:
// expired authorities next to valid ones are warnings. When the trust domain
// is null, unknown or itself invalid (its own validator reports that), or the
// expression matches more than one attribute, only parsing is checked.
func SPIFFEBundleFor(trustDomain path.Expression) validator.String {
	return spiffeBundleValidator{trustDomain: trustDomain, now: time.Now}
}

type spiffeBundleValidator struct {
	trustDomain path.Expression
	now         func() time.Time
}

func (v spiffeBundleValidator) Description(context.Context) string {
	return fmt.Sprintf("value must be a SPIFFE bundle JSON document for the trust domain in %s, with at least one currently valid X.509 authority", v.trustDomain)
}

func (v spiffeBundleValidator) MarkdownDescription(context.Context) string {
	return fmt.Sprintf("value must be a SPIFFE bundle JSON document for the trust domain in `%s`, with at least one currently valid X.509 authority", v.trustDomain)
}

func (v spiffeBundleValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}

	td, found, diags := v.resolveTrustDomain(ctx, req)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		return
	}
	if !found {
		// Without the trust domain only the document's syntax can be
		// checked; the trust domain stands in for go-spiffe and is not
		// compared with anything.
		td = spiffeid.RequireTrustDomainFromString("unknown.invalid")
	}

	const detail = "The value must be a SPIFFE bundle JSON document (a JWK set with \"x509-svid\" and \"jwt-svid\" keys), " +
		"as printed by `spire-server bundle show -format spiffe` on the trust domain's SPIRE server " +
		"or read by the zerotrust_trust_bundle data source."
	bundle, err := trustbundle.Parse(td, []byte(req.ConfigValue.ValueString()))
	if err != nil {
		AttributeError(&resp.Diagnostics, req.Path, "Invalid SPIFFE Bundle", detail+"\n\n"+capitalize(err.Error())+".")
		return
	}
	if !found {
		return
	}

	warnings, err := trustbundle.Check(td, bundle, v.now())
	if err != nil {
		AttributeError(&resp.Diagnostics, req.Path, "Unusable SPIFFE Bundle", fmt.Sprintf(
			"The bundle cannot serve as the trust bundle of %q: read a current bundle from that trust domain's SPIRE server, "+
				"for example with the zerotrust_trust_bundle data source.\n\n%s.", td.Name(), capitalize(err.Error())))
		return
	}
	for _, warning := range warnings {
		AttributeWarning(&resp.Diagnostics, req.Path, "Expired SPIFFE Bundle Authority", fmt.Sprintf(
			"The bundle for %q still has a valid X.509 authority, but one has expired and no longer helps: %s. "+
				"SPIRE drops expired authorities from its bundle by itself; a fresher copy of the bundle avoids this warning.",
			td.Name(), strings.TrimSuffix(warning, ".")))
	}
}

// resolveTrustDomain reads the trust domain the bundle is for. found is false
// when there is no single known, valid trust domain to check against.
func (v spiffeBundleValidator) resolveTrustDomain(ctx context.Context, req validator.StringRequest) (spiffeid.TrustDomain, bool, diag.Diagnostics) {
	matched, diags := req.Config.PathMatches(ctx, req.PathExpression.Merge(v.trustDomain))
	if diags.HasError() || len(matched) != 1 {
		return spiffeid.TrustDomain{}, false, diags
	}

	var value attr.Value
	if getDiags := req.Config.GetAttribute(ctx, matched[0], &value); getDiags.HasError() {
		return spiffeid.TrustDomain{}, false, getDiags
	}
	if value == nil || value.IsNull() || value.IsUnknown() {
		return spiffeid.TrustDomain{}, false, nil
	}
	stringValuable, ok := value.(basetypes.StringValuable)
	if !ok {
		return spiffeid.TrustDomain{}, false, nil
	}
	stringValue, convertDiags := stringValuable.ToStringValue(ctx)
	if convertDiags.HasError() || stringValue.IsNull() || stringValue.IsUnknown() {
		return spiffeid.TrustDomain{}, false, convertDiags
	}
	td, err := ParseTrustDomain(stringValue.ValueString())
	if err != nil {
		return spiffeid.TrustDomain{}, false, nil
	}
	return td, true, nil
}
