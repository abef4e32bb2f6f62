// Command terraform-provider-zerotrust serves the zerotrust Terraform provider over plugin protocol 6.
package main

import (
	"flag"
	"log"
	"os"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/protoserver"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/provider"
)

// version is set by goreleaser at build time.
var version = "dev"

func main() {
	quietFrameworkLogs()
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
	// every request's context (see internal/protoserver).
	server, err := protoserver.New(provider.New(version)())()
	if err == nil {
		err = tf6server.Serve("registry.terraform.io/ztfabric/zerotrust", func() tfprotov6.ProviderServer { return server }, opts...)
	}
	stopProfiles()
	if err != nil {
		log.Fatal(err.Error())
	}
}

// quietFrameworkLogs turns off the plugin framework's own trace logs unless
// someone asked for logs: Terraform discards a provider's logs when TF_LOG is
// unset, yet the framework formats them anyway, which bench/ measured at about
// a fifth of the provider's CPU.
func quietFrameworkLogs() {
	if os.Getenv("TF_LOG") != "" || os.Getenv("TF_LOG_PROVIDER") != "" {
		return
	}
	for _, name := range []string{"TF_LOG_SDK", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_SDK_PROTO"} {
		if os.Getenv(name) == "" {
			_ = os.Setenv(name, "off")
		}
	}
}
