package protoserver

import (
	"os"
	"runtime/debug"
	"strings"
)

// Tune sets what the process serving the provider with tf6server.Serve and
// tf6server.WithLogEnvVarName(logName) runs with:
// logs quiet unless someone asked for logs, and the garbage collector's
// target. The provider binary calls it before tf6server.Serve, and so does
// the benchmark's plugin floor, so that both pay the same. Neither changes an
// answer: the same code runs with logs on and off (only what is written
// differs), and the GC target moves memory, not results.
func Tune(logName string) {
	quietLogs(logName)
	tuneGC()
}

// quietLogs turns the SDK's and the provider's logs off when no log variable
// is set. Terraform shows a provider's logs only when TF_LOG or
// TF_LOG_PROVIDER asks for them, yet without a level of their own
// terraform-plugin-go's loggers run at trace: every request's log lines
// were formatted as JSON and written to Terraform, which dropped them, a
// large share of the provider's CPU in a plan (bench/ANALYSIS.md,
// "Measurements the code's comments point to"). Any log variable set
// (TF_LOG, TF_LOG_PROVIDER, TF_LOG_PROVIDER_<LOGNAME>, TF_LOG_SDK*) leaves
// every level as terraform-plugin-go sets it.
func quietLogs(logName string) {
	provider := "TF_LOG_PROVIDER_" + strings.ToUpper(logName)
	for _, env := range os.Environ() {
		name, value, _ := strings.Cut(env, "=")
		if value != "" && (name == "TF_LOG" || name == "TF_LOG_PROVIDER" || name == provider || strings.HasPrefix(name, "TF_LOG_SDK")) {
			return
		}
	}
	for _, name := range []string{"TF_LOG_SDK", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_SDK_PROTO", provider} {
		_ = os.Setenv(name, "off")
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
// bench/ANALYSIS.md, Peak RSS).
const gcPercent = 75

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
