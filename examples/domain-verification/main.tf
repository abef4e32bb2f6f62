# Proves control of a domain to Kuadrant in one apply:
#   1. zerotrust_domain_verification creates the DomainVerification and waits
#      for the controller's token;
#   2. the hashicorp/dns provider publishes the token as a TXT record with an
#      RFC 2136 dynamic update (TSIG-signed) on the zone's primary server;
#   3. the zerotrust_domain_verification data source waits until every
#      authoritative server of the zone serves the record and the controller
#      reports the domain verified.
# A check block keeps validating it on every later plan.

terraform {
  required_providers {
    zerotrust = {
      source = "ztfabric/zerotrust"
    }
    dns = {
      source  = "hashicorp/dns"
      version = "~> 3.4"
    }
  }
}

variable "kubeconfig" {
  description = "Kubeconfig of the cluster that runs the Kuadrant operator."
  type        = string
  default     = "~/.kube/config"
}

variable "zone" {
  description = "The DNS zone that holds the domain, without the trailing dot."
  type        = string
  default     = "example.com"
}

variable "domain" {
  description = "The domain to verify: the zone's apex or a name inside it."
  type        = string
  default     = "apps.example.com"
}

variable "dns_server" {
  description = "The zone's primary server, which accepts RFC 2136 updates."
  type        = string
  default     = "ns1.example.com"
}

variable "tsig_key_name" {
  description = "Name of the TSIG key allowed to update the zone (with the trailing dot)."
  type        = string
  default     = "terraform."
}

variable "tsig_secret" {
  description = "Base64 secret of the TSIG key."
  type        = string
  sensitive   = true
}

provider "zerotrust" {
  kubernetes = { config_path = var.kubeconfig }

  # Where to find the zone's authoritative servers; the TXT answers always come
  # from those servers directly.
  dns = { resolver = "1.1.1.1:53", timeout = "5s" }
}

provider "dns" {
  update {
    server        = var.dns_server
    key_name      = var.tsig_key_name
    key_algorithm = "hmac-sha256"
    key_secret    = var.tsig_secret
  }
}

resource "zerotrust_domain_verification" "this" {
  domain = var.domain
}

# The record lives at the domain itself; the dns provider wants its name
# relative to the zone (no name for the apex).
resource "dns_txt_record_set" "verification" {
  zone = "${var.zone}."
  name = zerotrust_domain_verification.this.txt_record_name == var.zone ? null : trimsuffix(zerotrust_domain_verification.this.txt_record_name, ".${var.zone}")
  txt  = [zerotrust_domain_verification.this.txt_record_value]
  ttl  = 300
}

data "zerotrust_domain_verification" "this" {
  domain  = zerotrust_domain_verification.this.domain
  wait    = true
  timeout = "10m"

  # Read only after the record exists.
  depends_on = [dns_txt_record_set.verification]
}

# Continuous validation: on every later plan and apply, a warning when the
# domain is no longer verified (the record was removed, a server stopped
# serving it). It asserts on the data source above rather than on one of its
# own: Terraform plans a read of a check block's own data source on every
# run, so `terraform plan -detailed-exitcode` of a converged configuration
# would never exit 0.
check "domain_verified" {
  assert {
    condition     = data.zerotrust_domain_verification.this.present && data.zerotrust_domain_verification.this.verified == true
    error_message = "${var.domain}: ${join("; ", [for s in data.zerotrust_domain_verification.this.servers : "${s.server}: ${s.answer}"])}"
  }
}

output "verified" {
  value = data.zerotrust_domain_verification.this.verified
}

output "servers" {
  description = "What each authoritative server answered."
  value       = { for s in data.zerotrust_domain_verification.this.servers : s.server => s.answer }
}
