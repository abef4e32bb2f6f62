package validate

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// PEMCertificates accepts one or more PEM CERTIFICATE blocks (a CA bundle such
// as zerotrust_trust_bundle's x509_authorities_pem) of which at least one is
// valid now. Expired certificates next to valid ones are warnings.
func PEMCertificates() validator.String {
	return pemCertificatesValidator{now: time.Now}
}

// PEMCertificatesFor is PEMCertificates that also refuses a certificate
// carrying a SPIFFE ID of a trust domain other than the one held by the
// attribute at trustDomain (as SPIRE CAs carry spiffe://<trust domain>): a
// bundle pasted for the wrong peer. When that trust domain is null, unknown or
// invalid, only PEMCertificates' checks apply.
func PEMCertificatesFor(trustDomain path.Expression) validator.String {
	return pemCertificatesValidator{trustDomain: &trustDomain, now: time.Now}
}

type pemCertificatesValidator struct {
	trustDomain *path.Expression
	now         func() time.Time
}

func (v pemCertificatesValidator) Description(context.Context) string {
	if v.trustDomain != nil {
		return fmt.Sprintf("value must be PEM CERTIFICATE blocks of the trust domain in %s, at least one of them currently valid", *v.trustDomain)
	}
	return "value must be PEM CERTIFICATE blocks, at least one of them currently valid"
}

func (v pemCertificatesValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (v pemCertificatesValidator) ValidateString(ctx context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	const detail = "The value must be one or more PEM-encoded CA certificates (\"-----BEGIN CERTIFICATE-----\" blocks), " +
		"for example the x509_authorities_pem output of the zerotrust_trust_bundle data source."

	// Without a trust domain the foreign-trust-domain check has nothing to
	// compare with; a placeholder no SPIFFE ID can belong to stands in.
	td, found := spiffeid.RequireTrustDomainFromString("unknown.invalid"), false
	if v.trustDomain != nil {
		resolved, ok, diags := spiffeBundleValidator{trustDomain: *v.trustDomain}.resolveTrustDomain(ctx, req)
		resp.Diagnostics.Append(diags...)
		if diags.HasError() {
			return
		}
		if ok {
			td, found = resolved, true
		}
	}
	bundle, err := trustbundle.ParsePEM(td, []byte(req.ConfigValue.ValueString()))
	if err != nil {
		AttributeError(&resp.Diagnostics, req.Path, "Invalid PEM Certificates", detail+"\n\n"+capitalize(err.Error())+".")
		return
	}
	warnings, err := trustbundle.Check(td, bundle, v.now())
	if err != nil && !found {
		// Only the validity window matters without a trust domain: drop the
		// foreign-trust-domain errors the placeholder provokes.
		warnings, err = checkValidity(bundle.X509Authorities(), v.now())
	}
	if err != nil {
		AttributeError(&resp.Diagnostics, req.Path, "Unusable PEM Certificates", detail+"\n\n"+capitalize(err.Error())+".")
		return
	}
	for _, warning := range warnings {
		AttributeWarning(&resp.Diagnostics, req.Path, "Expired CA Certificate", fmt.Sprintf(
			"Another certificate of the value is valid, but this one has expired and no longer helps: %s.",
			strings.TrimSuffix(warning, ".")))
	}
}

// checkValidity fails when no certificate is valid at now and warns about
// each expired one otherwise.
func checkValidity(certs []*x509.Certificate, now time.Time) ([]string, error) {
	var warnings, invalid []string
	for _, cert := range certs {
		switch {
		case now.After(cert.NotAfter):
			invalid = append(invalid, fmt.Sprintf("certificate %q expired at %s", cert.Subject.String(), cert.NotAfter.UTC().Format(time.RFC3339)))
			warnings = append(warnings, invalid[len(invalid)-1])
		case now.Before(cert.NotBefore):
			invalid = append(invalid, fmt.Sprintf("certificate %q is not valid before %s", cert.Subject.String(), cert.NotBefore.UTC().Format(time.RFC3339)))
		}
	}
	if len(invalid) == len(certs) {
		return nil, errors.New("no certificate is valid at " + now.UTC().Format(time.RFC3339) + ": " + strings.Join(invalid, "; "))
	}
	return warnings, nil
}
