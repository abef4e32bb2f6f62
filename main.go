// Command terraform-provider-zerotrust serves the zerotrust Terraform provider over plugin protocol 6.
package main

import (
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/protoserver"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
)

// version is set by goreleaser at build time.
var version = "dev"

func main() {
	stopProfiles := startProfiles()

	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	// tf6server.Serve instead of providerserver.Serve: the same server, but
	// with protoserver's wrapper, which keeps the framework from retaining
	// every request's context (see internal/protoserver), and the
	// resources' fast paths (see internal/fastpath).
	server := protoserver.New(provider.New(version), protoserver.WithFastPaths(provider.FastPaths))
	err := protoserver.Serve("registry.terraform.io/ztfabric/zerotrust", server, opts...)
	stopProfiles()
	if err != nil {
		log.Fatal(err.Error())
	}
}
