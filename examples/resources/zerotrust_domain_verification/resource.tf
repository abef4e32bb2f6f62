# Ask Kuadrant to verify apps.example.com; creation waits for the token.
resource "zerotrust_domain_verification" "apps" {
  domain = "apps.example.com"
}

# On a cluster of the provider's `clusters` map, with the conditions-based API.
resource "zerotrust_domain_verification" "shop" {
  cluster     = "west"
  domain      = "shop.example.com"
  api_version = "v1alpha1"

  timeouts {
    create = "10m"
  }
}

# Kuadrant's ingress flow: the ingress webhook created the DomainVerification for
# this domain (under a name of its own) and only the controller may change it.
# Adopt it instead of creating one: nothing is written to it, and destroying
# this resource leaves the object in place for the webhook and controller.
resource "zerotrust_domain_verification" "shop_ingress" {
  domain         = "ingress.shop.example.com"
  adopt_existing = true
}

# Publish zerotrust_domain_verification.apps.txt_record_value as a TXT record at
# zerotrust_domain_verification.apps.txt_record_name with your DNS provider.
output "txt_record" {
  value = {
    name  = zerotrust_domain_verification.apps.txt_record_name
    value = zerotrust_domain_verification.apps.txt_record_value
  }
}
