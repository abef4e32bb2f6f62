package protoserver

import (
	"os"

	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
)

// Serve serves the provider newProvider returns as the plugin at address (registry.terraform.io/<ns>/<type>)
// the way the provider binary does: framework logs quiet unless asked for,
// the server of New, tf6server. The benchmark's plugin floor calls it too,
// so that it is served exactly like the provider it is a floor for.
func Serve(address string, newProvider func() provider.Provider, opts ...tf6server.ServeOpt) error {
	quietFrameworkLogs()
	server, err := New(newProvider)()
	if err != nil {
		return err
	}
	return tf6server.Serve(address, func() tfprotov6.ProviderServer { return server }, opts...)
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
