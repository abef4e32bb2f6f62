# On the provider's default connection: the object name (by default the domain).
terraform import zerotrust_domain_verification.apps apps.example.com

# On a cluster of the provider's `clusters` map: <cluster>/<name>.
terraform import zerotrust_domain_verification.shop west/shop.example.com
