// Command terraform-provider-zerotrust serves the zerotrust Terraform provider over plugin protocol 6.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"

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

// startProfiles profiles the process into $ZT_PPROF_DIR when that is set:
// cpu-<pid>.pprof for its whole life and heap-<pid>.pprof when Terraform
// shuts it down. It exists for bench/, which needs to see where a long plan
// spends CPU and what it keeps alive; unset, it does nothing.
func startProfiles() (stop func()) {
	dir := os.Getenv("ZT_PPROF_DIR")
	if dir == "" {
		return func() {}
	}
	name := func(kind string) string { return filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", kind, os.Getpid())) }
	cpu, err := os.Create(name("cpu"))
	if err == nil {
		err = pprof.StartCPUProfile(cpu)
	}
	if err != nil {
		log.Printf("cpu profile: %v", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if cpu != nil {
			_ = cpu.Close()
		}
		heap, err := os.Create(name("heap"))
		if err != nil {
			log.Printf("heap profile: %v", err)
			return
		}
		defer heap.Close()
		runtime.GC() // the profile then shows what is live at the end
		if err := pprof.Lookup("heap").WriteTo(heap, 0); err != nil {
			log.Printf("heap profile: %v", err)
		}
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
