//go:build pprof

package main

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"
)

// startProfiles profiles the process into $ZT_PPROF_DIR when that is set:
// cpu-<pid>.pprof for its whole life and heap-<pid>.pprof when Terraform
// shuts it down. It exists for bench/, which builds the provider with
// `-tags pprof` to see where a long plan spends CPU and what it keeps alive;
// release builds get the no-op in nopprof.go. Unset, it does nothing.
//
// $ZT_CPU_LOG, when set and $ZT_PPROF_DIR is not, gets a line with the
// process's CPU seconds (user + system) and its peak RSS in KiB (VmHWM:
// getrusage's maxrss counts the Terraform process it was forked from) when
// it ends: the provider's own share of a plan, apart from Terraform's, for
// quick comparisons of two builds (bench/ samples /proc).
func startProfiles() (stop func()) {
	dir := os.Getenv("ZT_PPROF_DIR")
	if dir == "" {
		return logCPU
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
		// Where the process's memory went (heap, stacks, GC metadata), for
		// the RSS analysis: the heap profile shows only live objects.
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if b, err := json.MarshalIndent(ms, "", " "); err == nil {
			_ = os.WriteFile(name("memstats"), b, 0o644)
		}
		runtime.GC() // the profile then shows what is live at the end
		if err := pprof.Lookup("heap").WriteTo(heap, 0); err != nil {
			log.Printf("heap profile: %v", err)
		}
	}
}

func logCPU() {
	path := os.Getenv("ZT_CPU_LOG")
	if path == "" {
		return
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	_, _ = fmt.Fprintf(f, "%.3f %s\n", cpu.Seconds(), peakRSS())
}

func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "0"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSuffix(strings.TrimSpace(rest), " kB")
		}
	}
	return "0"
}
