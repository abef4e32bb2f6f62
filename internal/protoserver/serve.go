package protoserver

import (
	"os"
	"runtime/debug"

	"github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"google.golang.org/grpc"
)

// Serve serves the server newServer (New's factory) returns as the plugin at
// address (registry.terraform.io/<ns>/<type>) the way the provider binary
// does: framework logs quiet unless asked for, and terraform-plugin-go's
// gRPC server with the wire lane (wire.go) in front of it. With opts (the
// debug modes of tf6server) it is tf6server.Serve itself, lane included
// nowhere: a debugger sees the plain path. The benchmark's plugin floor
// calls it too, so that it is served exactly like the provider it is a
// floor for.
func Serve(address string, newServer func() (tfprotov6.ProviderServer, error), opts ...tf6server.ServeOpt) error {
	quietFrameworkLogs()
	tuneGC()
	server, err := newServer()
	if err != nil {
		return err
	}
	factory := func() tfprotov6.ProviderServer { return server }
	if len(opts) > 0 {
		return tf6server.Serve(address, factory, opts...)
	}
	var interceptors []grpc.ServerOption
	if lane, ok := newWireLane(server); ok {
		interceptors = append(interceptors, grpc.UnaryInterceptor(lane.intercept))
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: handshake,
		Plugins:         plugin.PluginSet{"provider": &tf6server.GRPCProviderPlugin{GRPCProvider: factory, Name: address}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts, grpc.MaxRecvMsgSize(maxMessageSize), grpc.MaxSendMsgSize(maxMessageSize))
			return grpc.NewServer(append(opts, interceptors...)...)
		},
	})
	return nil
}

// handshake is what Terraform and a protocol 6 plugin agree on before any
// RPC (the plugin protocol's published handshake; tf6server.Serve uses the
// same values, and the example and reliability tests run this binary under
// Terraform, which refuses a plugin whose handshake differs).
var handshake = plugin.HandshakeConfig{
	ProtocolVersion:  6,
	MagicCookieKey:   "TF_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "d602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2",
}

// maxMessageSize is the gRPC message limit both ways, tf6server's own (256
// MiB): a large state or schema must not fail here when it would not there.
const maxMessageSize = 256 << 20

// newWireLane is the lane for server, when it has fast paths, nobody asked
// for logs, and the protocol's messages are the ones the lane knows.
func newWireLane(server tfprotov6.ProviderServer) (wireLane, bool) {
	r, ok := server.(releasing)
	if !ok || len(r.fast) == 0 || logsAsked() {
		return wireLane{}, false
	}
	m, err := resolveWire()
	if err != nil {
		return wireLane{}, false
	}
	return wireLane{fast: r.fast, m: m}, true
}

func logsAsked() bool {
	return os.Getenv("TF_LOG") != "" || os.Getenv("TF_LOG_PROVIDER") != ""
}

// quietFrameworkLogs turns off the plugin framework's own trace logs unless
// someone asked for logs: Terraform discards a provider's logs when TF_LOG is
// unset, yet the framework formats them anyway, a large share of the
// provider's CPU in a plan (bench/ANALYSIS.md, "Measurements the code's
// comments point to").
func quietFrameworkLogs() {
	if logsAsked() {
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
// sets its peak memory. 75 keeps the peak of a large plan where 50 had it
// (38 MiB VmHWM at N = 1000) now that a plan allocates 40% of what it did,
// for a third less collection than 50; 100 went over 40 MiB (figures:
// bench/ANALYSIS.md, Peak RSS). The plugin floor of bench/ is served here
// too, so both pay the same GC.
const gcPercent = 75

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
