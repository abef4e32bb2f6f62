resource "zerotrust_domain_verification" "apps" {
  domain = "apps.example.com"
}

# Ask every authoritative server of example.com whether it serves the token
# of the DomainVerification above. Run it on demand:
#   terraform apply -invoke=action.zerotrust_domain_verification_check.apps
action "zerotrust_domain_verification_check" "apps" {
  config {
    name = zerotrust_domain_verification.apps.name
  }
}

# Or check a token directly, without a DomainVerification, asking given
# servers instead of the zone's discovered ones.
action "zerotrust_domain_verification_check" "partner" {
  config {
    domain      = "partner.example.com"
    token       = "kuadrant-verification=4f1c9e7d"
    nameservers = ["ns1.example.net", "ns2.example.net:5353"]
  }
}

# Or run the check right after the TXT record is published: put the trigger
# on the resource that publishes it (a DNS provider's record resource;
# terraform_data stands in for it here).
resource "terraform_data" "apps_txt_published" {
  input = zerotrust_domain_verification.apps.txt_record_value

  lifecycle {
    action_trigger {
      events  = [after_create]
      actions = [action.zerotrust_domain_verification_check.apps]
    }
  }
}
