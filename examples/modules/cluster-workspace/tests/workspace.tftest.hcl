# The module's own logic, with the zerotrust provider mocked (no cluster):
#   terraform test
# (internal/examplestest runs it). What it does against real clusters, SPIRE
# and workloads is TestAccWorkspacePerCluster's job.

mock_provider "zerotrust" {
  mock_data "zerotrust_spire_server" {
    defaults = {
      trust_domain        = "east.example.org"
      namespace           = "zero-trust-workload-identity-manager"
      bundle_namespace    = "zero-trust-workload-identity-manager"
      bundle_config_map   = "spire-bundle"
      federation_profile  = "https_spiffe"
      bundle_endpoint_url = "https://federation.east.example.org"
      endpoint_spiffe_id  = "spiffe://east.example.org/spire/server"
    }
  }
  mock_data "zerotrust_trust_bundle" {
    defaults = {
      spiffe_bundle = "{\"keys\":[]}"
    }
  }
  mock_data "zerotrust_federation_status" {
    defaults = {
      ok       = true
      problems = []
    }
  }
}

variables {
  # A SPIFFE bundle of west.example.org: one self-signed X.509 authority,
  # valid until 2126 (the provider validates bundles even when mocked).
  west_bundle = <<-EOT
    {"keys":[{"use":"x509-svid","kty":"EC","crv":"P-256","x":"3hqUaL64uTpS3H4UHv8_7j-chcsSOBSj3VlNsiTsdes","y":"j4_9BR9oX_KuNIzLZPJV205rFrchQgzpjtIp1QOBFK8","x5c":["MIIBfTCCASOgAwIBAgIBATAKBggqhkjOPQQDAjASMRAwDgYDVQQKEwdleGFtcGxlMCAXDTI2MDEwMTAwMDAwMFoYDzIxMjYwMTAxMDAwMDAwWjASMRAwDgYDVQQKEwdleGFtcGxlMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE3hqUaL64uTpS3H4UHv8/7j+chcsSOBSj3VlNsiTsdeuPj/0FH2hf8q40jMtk8lXbTmsWtyFCDOmO0inVA4EUr6NoMGYwDgYDVR0PAQH/BAQDAgEGMA8GA1UdEwEB/wQFMAMBAf8wHQYDVR0OBBYEFEHc8CWY625kHJ+bOQym2XmsTqKRMCQGA1UdEQQdMBuGGXNwaWZmZTovL3dlc3QuZXhhbXBsZS5vcmcwCgYIKoZIzj0EAwIDSAAwRQIhAIPZRmuecN79WPH9y845HD4awX8J/RBtG6eDBLnDkzKLAiAmf2bfK4dcywE4rCfDIeIAzdWj1Nh5fZPk7+QuLlXWHQ=="]}]}
  EOT

  peers = {
    west = {
      trust_domain        = "west.example.org"
      bundle_endpoint_url = "https://federation.west.example.org"
      endpoint_spiffe_id  = "spiffe://west.example.org/spire/server"
      bundle              = null
    }
    partner = {
      trust_domain        = "partner.example.com"
      bundle_endpoint_url = "https://bundle.partner.example.com/spiffe"
    }
  }
}

run "publishes_its_facts_in_the_peers_shape" {
  assert {
    condition = output.federation == {
      trust_domain        = "east.example.org"
      bundle_endpoint_url = "https://federation.east.example.org"
      endpoint_spiffe_id  = "spiffe://east.example.org/spire/server"
      bundle              = "{\"keys\":[]}"
    }
    error_message = "unexpected federation output ${jsonencode(output.federation)}"
  }
}

run "a_bundle_less_https_spiffe_peer_waits" {
  assert {
    condition     = output.waiting_for == tolist(["west"])
    error_message = "expected west (no bundle yet) to wait, got ${jsonencode(output.waiting_for)}"
  }
  assert {
    # An https_web peer needs no bundle: it is federated at once.
    condition     = output.federated_with == tolist(["partner"])
    error_message = "expected only the https_web peer federated, got ${jsonencode(output.federated_with)}"
  }
  assert {
    condition     = zerotrust_federated_trust_domain.peer["partner"].bundle_endpoint_profile.type == "https_web"
    error_message = "a peer without endpoint_spiffe_id must be federated with the https_web profile"
  }
  assert {
    # The workloads federate with the federated peer only, not with the one
    # still waiting for its bundle.
    condition     = output.workloads_federate_with == tolist(["partner.example.com"])
    error_message = "expected the workloads to federate with partner.example.com only, got ${jsonencode(output.workloads_federate_with)}"
  }
}

run "the_peer_is_federated_once_its_bundle_is_known" {
  variables {
    peers = {
      west = {
        trust_domain        = "west.example.org"
        bundle_endpoint_url = "https://federation.west.example.org"
        endpoint_spiffe_id  = "spiffe://west.example.org/spire/server"
        bundle              = var.west_bundle
      }
      partner = {
        trust_domain        = "partner.example.com"
        bundle_endpoint_url = "https://bundle.partner.example.com/spiffe"
      }
    }
  }
  assert {
    condition     = length(output.waiting_for) == 0 && output.federated_with == tolist(["partner", "west"])
    error_message = "expected both peers federated, got federated_with ${jsonencode(output.federated_with)}, waiting_for ${jsonencode(output.waiting_for)}"
  }
  assert {
    condition = (zerotrust_federated_trust_domain.peer["west"].bundle_endpoint_profile.type == "https_spiffe" &&
      zerotrust_federated_trust_domain.peer["west"].trust_domain_bundle == var.west_bundle &&
    zerotrust_federated_trust_domain.peer["west"].wait_for_bundle)
    error_message = "an https_spiffe peer must be bootstrapped with its bundle and waited for"
  }
  assert {
    condition     = output.workloads_federate_with == tolist(["partner.example.com", "west.example.org"])
    error_message = "expected the workloads to federate with both peers, got ${jsonencode(output.workloads_federate_with)}"
  }
}

run "no_workload_identity_without_a_label" {
  variables {
    workload_label = null
  }
  assert {
    condition     = length(zerotrust_cluster_spiffe_id.workloads) == 0 && length(output.workloads_federate_with) == 0
    error_message = "workload_label = null must create no ClusterSPIFFEID"
  }
}

run "no_federation_with_itself" {
  command = plan
  variables {
    peers = {
      me = {
        trust_domain        = "east.example.org"
        bundle_endpoint_url = "https://federation.east.example.org"
      }
    }
  }
  expect_failures = [zerotrust_federated_trust_domain.peer]
}

run "one_peer_per_trust_domain" {
  command = plan
  variables {
    peers = {
      west = {
        trust_domain        = "west.example.org"
        bundle_endpoint_url = "https://federation.west.example.org"
      }
      west-again = {
        trust_domain        = "west.example.org"
        bundle_endpoint_url = "https://federation.west.example.org"
      }
    }
  }
  expect_failures = [var.peers]
}

run "a_cluster_that_does_not_answer_publishes_no_null_facts" {
  command = plan
  # What zerotrust_spire_server reads while the cluster does not answer
  # (on_unreachable = "warn"): the argument, and null for every fact.
  override_data {
    target = data.zerotrust_spire_server.this
    values = {
      trust_domain        = null
      namespace           = null
      bundle_namespace    = null
      bundle_config_map   = null
      federation_profile  = null
      bundle_endpoint_url = null
      endpoint_spiffe_id  = null
    }
  }
  variables {
    bundle_endpoint_url = "https://federation.east.example.org"
  }
  # The check reads the cluster after the apply: unknown in a plan.
  expect_failures = [output.federation, check.federation_healthy]
}

run "an_unhealthy_federation_warns" {
  # The health data source, read outside the check block, reports a problem:
  # the check fails as a warning naming it, and the apply goes on.
  override_data {
    target = data.zerotrust_federation_status.this
    values = {
      ok       = false
      problems = ["west.example.org: SPIRE holds no bundle of it"]
    }
  }
  expect_failures = [check.federation_healthy]
}
