package main

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// The fleet's processes: everything this process started and still runs
// (etcd, the apiservers, the SPIRE servers, spire-controller-manager, the
// agents, the workloads), found by walking /proc from this process down.
// Terraform and its providers are measured per command (tfEnv.measured);
// between commands none runs. The exec endpoints run inside this process
// (harness.SpireOptions.ExecEndpointCommand unset), so their cost is the
// bench's own, counted under "bench (exec endpoints, polls)".

// ProcGroup is the processes of one program.
type ProcGroup struct {
	Program string  `json:"program"`
	Procs   int     `json:"procs"`
	RSSMiB  float64 `json:"rss_mib"` // VmRSS, summed
	// PSSMiB is the proportional set size, summed: each page shared by k
	// processes (the binary's text of the 26 apiservers) counts 1/k in
	// each, so the sum is what the group holds of the machine's memory.
	PSSMiB  float64 `json:"pss_mib"`
	PeakMiB float64 `json:"peak_mib"`    // the largest VmHWM of one process
	CPU     float64 `json:"cpu_total_s"` // since each started
}

type procSet []procSample

type procSample struct {
	comm          string
	cpu           float64
	rss, hwm, pss int64
}

// labProcs lists this process and its descendants but terraform and its
// providers.
func labProcs() procSet {
	var out procSet
	queue := []int{os.Getpid()}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		comm, cpu, ok := procCPU(pid)
		if !ok || comm == "terraform" || strings.HasPrefix(comm, "terraform-provi") {
			continue
		}
		rss, hwm := procRSS(pid)
		out = append(out, procSample{comm: comm, cpu: cpu, rss: rss, hwm: hwm, pss: procPSS(pid)})
		queue = append(queue, children(pid)...)
	}
	return out
}

func (s procSet) cpu() float64 {
	var total float64
	for _, p := range s {
		total += p.cpu
	}
	return total
}

// groups sums s by program, largest memory first.
func (s procSet) groups() []ProcGroup {
	by := map[string]*ProcGroup{}
	for i, p := range s {
		name := p.comm
		if i == 0 {
			name = "bench (exec endpoints, polls)"
		} else if name == "spire-controlle" {
			name = "spire-controller-manager"
		}
		g := by[name]
		if g == nil {
			g = &ProcGroup{Program: name}
			by[name] = g
		}
		g.Procs++
		g.RSSMiB += float64(p.rss) / (1 << 20)
		g.PSSMiB += float64(p.pss) / (1 << 20)
		g.PeakMiB = max(g.PeakMiB, float64(p.hwm)/(1<<20))
		g.CPU += p.cpu
	}
	var out []ProcGroup
	for _, g := range by {
		g.RSSMiB, g.PSSMiB, g.PeakMiB, g.CPU = round3(g.RSSMiB), round3(g.PSSMiB), round3(g.PeakMiB), round3(g.CPU)
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RSSMiB > out[j].RSSMiB })
	return out
}

// procRSS returns the resident set size (VmRSS) and its peak (VmHWM) of
// pid in bytes.
func procRSS(pid int) (rss, hwm int64) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rss = kib(rest)
		} else if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			hwm = kib(rest)
		}
	}
	return rss, hwm
}

// procPSS is the proportional set size of pid in bytes (smaps_rollup).
func procPSS(pid int) int64 {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "smaps_rollup"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			return kib(rest)
		}
	}
	return 0
}

func kib(rest string) int64 {
	f := strings.Fields(rest)
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseInt(f[0], 10, 64)
	return v * 1024
}

// memAvailableMiB is the machine's MemAvailable.
func memAvailableMiB() float64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			return round3(float64(kib(rest)) / (1 << 20))
		}
	}
	return 0
}

// countProcs is how many processes of the machine have comm name.
func countProcs(name string) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	n := 0
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		if comm, _, ok := procCPU(pid); ok && comm == name {
			n++
		}
	}
	return n
}
