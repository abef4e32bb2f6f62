// Command terraform-provider-zerotrust serves the zerotrust Terraform provider over plugin protocol 6.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
)

// version is set by goreleaser at build time.
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/ztfabric/zerotrust",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}
