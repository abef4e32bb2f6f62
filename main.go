// Command terraform-provider-zerotrust serves the zerotrust Terraform provider over plugin protocol 6.
package main

import (
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/protoserver"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
)

// version is set by goreleaser at build time.
var version = "dev"

// address is the source address Terraform knows the provider by; logName
// names its log level variable, TF_LOG_PROVIDER_ZEROTRUST.
const (
	address = "registry.terraform.io/ztfabric/zerotrust"
	logName = "zerotrust"
)

func main() {
	stopProfiles := startProfiles()

	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	opts := []tf6server.ServeOpt{tf6server.WithLogEnvVarName(logName)}
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	// tf6server.Serve, as providerserver.Serve does, with the framework's
	// server behind protoserver's wrapper, which keeps the framework from
	// retaining every request's context and tries the resources' fast
	// paths first (see internal/protoserver and internal/fastpath).
	protoserver.Tune(logName)
	newServer := protoserver.New(provider.New(version), protoserver.WithFastPaths(provider.FastPaths))
	server, err := newServer()
	if err == nil {
		err = tf6server.Serve(address, func() tfprotov6.ProviderServer { return server }, opts...)
	}
	stopProfiles()
	if err != nil {
		log.Fatal(err.Error())
	}
}
