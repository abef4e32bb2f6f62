package protoserver

import (
	"os"
	"runtime/debug"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
)

// Serve serves the server newServer (New's factory) returns as the plugin at
// address (registry.terraform.io/<ns>/<type>) the way the provider binary
// does: framework logs quiet unless asked for, tf6server. The benchmark's
// plugin floor calls it too, so that it is served exactly like the provider
// it is a floor for.
func Serve(address string, newServer func() (tfprotov6.ProviderServer, error), opts ...tf6server.ServeOpt) error {
	quietFrameworkLogs()
	tuneGC()
	server, err := newServer()
	if err != nil {
		return err
	}
	return tf6server.Serve(address, func() tfprotov6.ProviderServer { return server }, opts...)
}

// quietFrameworkLogs turns off the plugin framework's own trace logs unless
// someone asked for logs: Terraform discards a provider's logs when TF_LOG is
// unset, yet the framework formats them anyway, a large share of the
// provider's CPU in a plan (bench/ANALYSIS.md, "Measurements the code's
// comments point to").
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

// gcPercent is the garbage collector's target (GOGC) for a provider process
// unless its environment sets GOGC. A provider lives for one Terraform
// command, keeps a small live heap and allocates many times that on the way
// (every request's values are decoded anew), so the default of 100, which
// lets the heap grow to twice its live size between collections, is what
// sets its peak memory. 50 lowers the peak of a large plan for a few
// percent more provider CPU (figures: bench/ANALYSIS.md, Peak RSS). The
// plugin floor of bench/ is served here too, so both pay the same GC.
const gcPercent = 50

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
