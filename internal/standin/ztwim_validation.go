package standin

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The ZTWIM stand-in's checks of spec.federation (validation.go), run by its
// reconcile in ztwim.go.

// ztwimValidateFederation is validation.go validateFederationConfig, with
// its checks in its order and its messages.
func ztwimValidateFederation(fed map[string]any, trustDomain string) error {
	be, _, _ := unstructured.NestedMap(fed, "bundleEndpoint")
	if err := ztwimValidateBundleEndpoint(be); err != nil {
		return fmt.Errorf("invalid bundle endpoint configuration: %w", err)
	}
	peers, _, _ := unstructured.NestedSlice(fed, "federatesWith")
	if len(peers) > 50 {
		return fmt.Errorf("federatesWith array cannot exceed 50 entries, got %d", len(peers))
	}
	seen := map[string]bool{}
	for i, item := range peers {
		p, _ := item.(map[string]any)
		td := ztwimString(p, "trustDomain")
		if td == trustDomain {
			return fmt.Errorf("federatesWith[%d]: cannot federate with own trust domain %s", i, td)
		}
		if seen[td] {
			return fmt.Errorf("federatesWith[%d]: duplicate trust domain %s", i, td)
		}
		seen[td] = true
		// validateFederatedTrustDomain
		if td == "" {
			return fmt.Errorf("federatesWith[%d]: trustDomain is required", i)
		}
		if url := ztwimString(p, "bundleEndpointUrl"); !strings.HasPrefix(url, "https://") {
			return fmt.Errorf("federatesWith[%d]: bundleEndpointUrl must use https://, got %s", i, url)
		}
		if ztwimString(p, "bundleEndpointProfile") == "https_spiffe" {
			id := ztwimString(p, "endpointSpiffeId")
			if id == "" {
				return fmt.Errorf("federatesWith[%d]: endpointSpiffeId is required for https_spiffe profile", i)
			}
			if !strings.HasPrefix(id, "spiffe://") {
				return fmt.Errorf("federatesWith[%d]: endpointSpiffeId must start with spiffe://, got %s", i, id)
			}
		}
	}
	return nil
}

// ztwimValidateBundleEndpoint is validation.go validateBundleEndpoint.
func ztwimValidateBundleEndpoint(be map[string]any) error {
	if ztwimString(be, "profile") == "https_web" {
		web, found, _ := unstructured.NestedMap(be, "httpsWeb")
		if !found {
			return errors.New("httpsWeb configuration is required when profile is https_web")
		}
		acme, hasACME, _ := unstructured.NestedMap(web, "acme")
		cert, hasCert, _ := unstructured.NestedMap(web, "servingCert")
		switch {
		case hasACME && hasCert:
			return errors.New("acme and servingCert are mutually exclusive, only one can be set")
		case !hasACME && !hasCert:
			return errors.New("either acme or servingCert must be set for https_web profile")
		case hasACME:
			if err := ztwimValidateACME(acme); err != nil {
				return fmt.Errorf("invalid ACME configuration: %w", err)
			}
		default:
			if n, _, _ := unstructured.NestedInt64(cert, "fileSyncInterval"); n > 0 && (n < 3600 || n > 7776000) {
				return fmt.Errorf("invalid ServingCert configuration: %w",
					fmt.Errorf("fileSyncInterval must be between 3600 and 7776000 seconds, got %d", n))
			}
		}
	}
	if n, _, _ := unstructured.NestedInt64(be, "refreshHint"); n > 0 && (n < 60 || n > 3600) {
		return fmt.Errorf("refreshHint must be between 60 and 3600 seconds, got %d", n)
	}
	return nil
}

// ztwimValidateACME is validation.go validateAcmeConfig.
func ztwimValidateACME(acme map[string]any) error {
	if dir := ztwimString(acme, "directoryUrl"); !strings.HasPrefix(dir, "https://") {
		return fmt.Errorf("directoryUrl must use https://, got %s", dir)
	}
	if ztwimString(acme, "domainName") == "" {
		return errors.New("domainName is required")
	}
	if ztwimString(acme, "email") == "" {
		return errors.New("email is required")
	}
	if ztwimString(acme, "tosAccepted") != "true" {
		return errors.New("tosAccepted must be true to use ACME")
	}
	return nil
}
