# Wait until every authoritative server of the zone serves the token and the
# controller has verified the domain (after the TXT record is published).
data "zerotrust_domain_verification" "apps" {
  domain  = "apps.example.com"
  wait    = true
  timeout = "10m"
}

# Ask given servers instead of discovering the zone's name servers.
data "zerotrust_domain_verification" "direct" {
  domain      = "apps.example.com"
  nameservers = ["ns1.example.com:53", "ns2.example.com:53"]
}

output "per_server" {
  value = {
    for s in data.zerotrust_domain_verification.direct.servers : s.server => s.answer
  }
}

# Continuous validation: a failing check is a warning on every plan and apply.
check "apps_domain_verified" {
  data "zerotrust_domain_verification" "check" {
    domain  = "apps.example.com"
    wait    = true
    timeout = "30s"
  }

  assert {
    condition     = data.zerotrust_domain_verification.check.verified == true
    error_message = "apps.example.com is not verified: ${coalesce(data.zerotrust_domain_verification.check.message, "no verdict yet")}"
  }
}

# A subdomain of a verified domain needs no verification of its own:
# covered_by names the verified parent (here apps.example.com), and verified is
# true without a DomainVerification for the subdomain.
data "zerotrust_domain_verification" "api" {
  domain = "api.apps.example.com"
}

output "api_covered_by" {
  value = data.zerotrust_domain_verification.api.covered_by
}
