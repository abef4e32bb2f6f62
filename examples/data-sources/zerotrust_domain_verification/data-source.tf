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
# It asserts on the data source above rather than on one of its own: Terraform
# plans a read of a check block's own data source on every run, so
# `terraform plan -detailed-exitcode` of a converged configuration would never
# exit 0.
check "apps_domain_verified" {
  assert {
    condition     = data.zerotrust_domain_verification.apps.verified == true
    error_message = "apps.example.com is not verified: ${coalesce(data.zerotrust_domain_verification.apps.message, "no verdict yet")}"
  }
}
