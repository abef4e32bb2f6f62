package conformance

import "github.com/ztfabric/terraform-provider-zerotrust/internal/typename"

func init() {
	const be = "spec.federation.bundleEndpoint"
	contracts = append(contracts, resourceContract{
		TypeName: typename.SpireFederation.Full(),
		CRD:      "spireservers.operator.openshift.io",
		Version:  "v1alpha1",
		Fields: []mapping{
			{Attr: "bundle_endpoint", Field: be},
			{Attr: "bundle_endpoint.profile", Field: be + ".profile"},
			{Attr: "bundle_endpoint.refresh_hint", Field: be + ".refreshHint"},
			{Attr: "bundle_endpoint.https_web", Field: be + ".httpsWeb"},
			{Attr: "bundle_endpoint.https_web.acme", Field: be + ".httpsWeb.acme"},
			{Attr: "bundle_endpoint.https_web.acme.directory_url", Field: be + ".httpsWeb.acme.directoryUrl"},
			{Attr: "bundle_endpoint.https_web.acme.domain_name", Field: be + ".httpsWeb.acme.domainName"},
			{Attr: "bundle_endpoint.https_web.acme.email", Field: be + ".httpsWeb.acme.email"},
			{Attr: "bundle_endpoint.https_web.acme.tos_accepted", Field: be + ".httpsWeb.acme.tosAccepted"},
			{Attr: "bundle_endpoint.https_web.serving_cert", Field: be + ".httpsWeb.servingCert"},
			{Attr: "bundle_endpoint.https_web.serving_cert.file_sync_interval", Field: be + ".httpsWeb.servingCert.fileSyncInterval"},
			{Attr: "bundle_endpoint.https_web.serving_cert.external_secret_ref", Field: be + ".httpsWeb.servingCert.externalSecretRef"},
			{Attr: "managed_route", Field: "spec.federation.managedRoute"},
			// A map keyed by trust domain, written as the list federatesWith
			// (the key becomes trustDomain).
			{Attr: "federates_with", Field: "spec.federation.federatesWith", Except: map[string]string{
				"maxItems": "ValidateConfig refuses more than 50 (the operator's hard-coded limit, also the CRD's " +
					"maxItems); ModifyPlan refuses more than the provider's max_federated_trust_domains (1..50)",
				"minItems": "an empty map is written as no federatesWith at all",
			}},
			{Attr: "federates_with.*.bundle_endpoint_url", Field: "spec.federation.federatesWith[].bundleEndpointUrl"},
			{Attr: "federates_with.*.bundle_endpoint_profile", Field: "spec.federation.federatesWith[].bundleEndpointProfile"},
			{Attr: "federates_with.*.endpoint_spiffe_id", Field: "spec.federation.federatesWith[].endpointSpiffeId"},
		},
		Unmapped: map[string]string{
			"cluster":         "which provider connection; not part of the object",
			"force_conflicts": "server-side apply option",
		},
		Transitions: []transition{
			{Field: "", Message: "Federation configuration cannot be removed once set.",
				PlanError: "destroy leaves spec.federation on the object with a warning and forgets the resource " +
					"(TestAccSpireFederation_destroyWarning); no update removes it because bundle_endpoint is required"},
			{Field: "spec.federation.bundleEndpoint", Message: "profile is immutable and cannot be changed once set",
				PlanError: "ModifyPlan refuses a changed bundle_endpoint.profile (TestAccSpireFederation_httpsWebACME, validation tests)"},
			{Field: "spec.federation.bundleEndpoint.httpsWeb", Message: "cannot switch from acme to servingCert configuration",
				PlanError: "ModifyPlan refuses switching https_web.acme to https_web.serving_cert"},
			{Field: "spec.federation.bundleEndpoint.httpsWeb", Message: "cannot switch from servingCert to acme configuration",
				PlanError: "ModifyPlan refuses switching https_web.serving_cert to https_web.acme"},
		},
	})
}
