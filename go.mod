module github.com/ztfabric/terraform-provider-zerotrust

go 1.26

require (
	github.com/hashicorp/terraform-plugin-framework v1.19.0
	github.com/hashicorp/terraform-plugin-framework-validators v0.19.0
	github.com/hashicorp/terraform-plugin-go v0.31.0
	github.com/hashicorp/terraform-plugin-log v0.11.0
	github.com/hashicorp/terraform-plugin-testing v1.16.0
	github.com/miekg/dns v1.1.73
	github.com/spiffe/go-spiffe/v2 v2.9.0
	k8s.io/apimachinery v0.35.4
	k8s.io/client-go v0.35.4
)
