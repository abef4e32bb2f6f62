# Runs against a real cluster with the ClusterFederatedTrustDomain CRD
# (spire.spiffe.io/v1alpha1), reached through the provider's environment
# variables, as in CI:
#   KUBE_CONFIG_PATH=PATH KUBE_CTX=NAME terraform test
# (internal/examplestest does so against a local kube-apiserver).
# Every run applies to the cluster; terraform test destroys what it created.

provider "zerotrust" {}

variables {
  # The test cluster runs no SPIRE server to remove bundles from.
  delete_bundle_on_destroy = false

  peers = {
    "alpha.tftest.example" = {
      bundle_endpoint_url = "https://spire.alpha.tftest.example:8443"
    }
    "beta.tftest.example" = {
      bundle_endpoint_url     = "https://bundle.beta.tftest.example/spiffe"
      bundle_endpoint_profile = "https_web"
    }
  }
}

run "one_object_per_peer" {
  assert {
    condition     = output.federated_trust_domains == tolist(["alpha.tftest.example", "beta.tftest.example"])
    error_message = "expected one ClusterFederatedTrustDomain per peer, got ${jsonencode(output.federated_trust_domains)}"
  }
  assert {
    condition     = zerotrust_federated_trust_domain.peer["alpha.tftest.example"].bundle_endpoint_profile.endpoint_spiffe_id == "spiffe://alpha.tftest.example/spire/server"
    error_message = "an https_spiffe peer without endpoint_spiffe_id must get spiffe://<trust domain>/spire/server"
  }
  assert {
    condition     = zerotrust_federated_trust_domain.peer["beta.tftest.example"].bundle_endpoint_profile.endpoint_spiffe_id == null
    error_message = "an https_web peer must not carry an endpoint SPIFFE ID"
  }
  assert {
    # On the default connection the import ID is the object name, derived from the trust domain.
    condition     = output.ids == { "alpha.tftest.example" = "alpha.tftest.example", "beta.tftest.example" = "beta.tftest.example" }
    error_message = "unexpected IDs ${jsonencode(output.ids)}"
  }
}

run "adding_a_peer_touches_no_other" {
  variables {
    peers = {
      "alpha.tftest.example" = {
        bundle_endpoint_url = "https://spire.alpha.tftest.example:8443"
      }
      "beta.tftest.example" = {
        bundle_endpoint_url     = "https://bundle.beta.tftest.example/spiffe"
        bundle_endpoint_profile = "https_web"
      }
      "gamma.tftest.example" = {
        bundle_endpoint_url = "https://spire.gamma.tftest.example:8443"
        endpoint_spiffe_id  = "spiffe://gamma.tftest.example/bundle-endpoint"
      }
    }
  }

  assert {
    condition     = length(output.federated_trust_domains) == 3
    error_message = "expected three peers, got ${jsonencode(output.federated_trust_domains)}"
  }
  assert {
    condition     = zerotrust_federated_trust_domain.peer["gamma.tftest.example"].bundle_endpoint_profile.endpoint_spiffe_id == "spiffe://gamma.tftest.example/bundle-endpoint"
    error_message = "an explicit endpoint_spiffe_id must be kept"
  }
}

run "rejects_an_unknown_profile" {
  command = plan

  variables {
    peers = {
      "delta.tftest.example" = {
        bundle_endpoint_url     = "https://spire.delta.tftest.example:8443"
        bundle_endpoint_profile = "mtls"
      }
    }
  }

  expect_failures = [var.peers]
}
