package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Results is everything results.json holds.
type Results struct {
	Started time.Time `json:"started"`
	// TerraformVersion is the CLI every table and target uses (the newest
	// this project pins); rows run on others carry their own version.
	TerraformVersion string `json:"terraform_version"`
	// AlsoTerraform are the other CLIs some rows ran on (options.alsoTerraform).
	AlsoTerraform []string `json:"also_terraform,omitempty"`
	AlsoN         int      `json:"also_n,omitempty"`
	// PeersMaxN is options.peersMaxN.
	PeersMaxN             int               `json:"peers_max_n,omitempty"`
	Finished              time.Time         `json:"finished"`
	Machine               Machine           `json:"machine"`
	Ns                    []int             `json:"n"`
	Runs                  int               `json:"runs"`
	FullCyclesMaxN        int               `json:"full_cycles_max_n,omitempty"`
	KubernetesDestroyMaxN int               `json:"kubernetes_destroy_max_n,omitempty"`
	Targets               []string          `json:"targets"`
	Scale                 []Summary         `json:"scale"`
	Process               []ProcessCost     `json:"process"`
	BundleFetch           *GoBench          `json:"bundle_fetch,omitempty"`
	ClusterScale          []ClusterScaleRow `json:"cluster_scale,omitempty"`
	ClusterHeal           []HealCase        `json:"cluster_heal,omitempty"`
	ClusterJoin           []JoinRow         `json:"cluster_join,omitempty"`
	ClusterCourier        []CourierRow      `json:"cluster_courier,omitempty"`
	Goals                 []Goal            `json:"targets_checked"`
	Notes                 []string          `json:"notes"`
}

// Machine describes where the numbers come from.
type Machine struct {
	CPUs       int    `json:"nproc"`
	CPUModel   string `json:"cpu_model"`
	MemTotal   string `json:"mem_total"`
	LoadAvg    string `json:"loadavg_at_start"`
	LoadAvgEnd string `json:"loadavg_at_end,omitempty"`
	Go         string `json:"go"`
	Terraform  string `json:"terraform"`
	Kernel     string `json:"kernel"`
}

// Summary is the median over runs of one phase of one target at one N.
type Summary struct {
	Target         string             `json:"target"`
	N              int                `json:"n"`
	Phase          string             `json:"phase"`
	Terraform      string             `json:"terraform,omitempty"` // CLI version that ran this row, e.g. "1.16.0"; empty in older results (see Machine.Terraform)
	Runs           int                `json:"runs"`
	WallMedian     float64            `json:"wall_median_s"`
	Walls          []float64          `json:"wall_s"`
	CPUTotalMedian float64            `json:"cpu_total_median_s"`
	CPUProvMedian  float64            `json:"cpu_provider_median_s"`
	PeakRSS        int64              `json:"provider_peak_rss_bytes"`
	PeakAnon       int64              `json:"provider_peak_anon_bytes,omitempty"`
	PlanEmpty      *bool              `json:"plan_empty,omitempty"`
	APIPerObject   map[string]float64 `json:"api_requests_per_object"`
	APITotal       map[string]int     `json:"api_requests_first_run"`
}

func summarize(target, terraform string, n int, samples []phaseSample) []Summary {
	var out []Summary
	for _, phase := range []string{"apply", "plan", "destroy"} {
		s := Summary{Target: target, Terraform: terraform, N: n, Phase: phase, APIPerObject: map[string]float64{}}
		var cpuT, cpuP []float64
		for _, x := range samples {
			if x.Phase != phase {
				continue
			}
			s.Runs++
			s.Walls = append(s.Walls, round3(x.Wall))
			cpuT = append(cpuT, x.CPUTotal)
			cpuP = append(cpuP, x.CPUProvider)
			s.PeakRSS = max(s.PeakRSS, x.ProviderRSS)
			s.PeakAnon = max(s.PeakAnon, x.ProviderAnon)
			if x.PlanEmpty != nil {
				empty := *x.PlanEmpty
				if s.PlanEmpty != nil {
					empty = empty && *s.PlanEmpty
				}
				s.PlanEmpty = &empty
			}
			if s.APITotal == nil {
				s.APITotal = x.API
			}
		}
		if s.Runs == 0 {
			continue // a phase this schedule does not time (see schedule in benchN)
		}
		s.WallMedian = round3(median(s.Walls))
		s.CPUTotalMedian = round3(median(cpuT))
		s.CPUProvMedian = round3(median(cpuP))
		for k, v := range s.APITotal {
			s.APIPerObject[k] = round3(float64(v) / float64(n))
		}
		out = append(out, s)
	}
	return out
}

// find is the summary of target at n and phase run on the main Terraform
// (r.TerraformVersion); findOn on another.
func (r *Results) find(target string, n int, phase string) *Summary {
	return r.findOn(r.TerraformVersion, target, n, phase)
}

func (r *Results) findOn(version, target string, n int, phase string) *Summary {
	for i := range r.Scale {
		s := &r.Scale[i]
		// Rows of older results carry no version: they ran on the main one.
		if s.Target == target && s.N == n && s.Phase == phase && (s.Terraform == version || s.Terraform == "") {
			return s
		}
	}
	return nil
}

// versions are the Terraform versions of the rows, the main one first.
func (r *Results) versions() []string {
	out := []string{r.TerraformVersion}
	for _, s := range r.Scale {
		if s.Terraform != "" && !slices.Contains(out, s.Terraform) {
			out = append(out, s.Terraform)
		}
	}
	return out
}

// cliVersion is the bare version of a terraform binary ("1.16.0").
func cliVersion(ctx context.Context, bin string) string {
	cmd := exec.CommandContext(ctx, bin, "version", "-json")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if json.Unmarshal(out, &v) != nil {
		return ""
	}
	return v.Version
}

func round3(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 3, 64), 64)
	return f
}

func machineFacts(ctx context.Context, terraform string) Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if out, err := exec.CommandContext(ctx, "nproc").Output(); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(string(out))); err == nil {
			m.CPUs = v
		}
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				m.MemTotal = strings.TrimSpace(rest)
			}
		}
		f.Close()
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "model name"); ok {
				m.CPUModel = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m.LoadAvg = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	cmd := exec.CommandContext(ctx, terraform, "version")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	if out, err := cmd.Output(); err == nil {
		m.Terraform = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	return m
}

// GoBench is the result of the bundle fetch Go benchmark.
type GoBench struct {
	Command string          `json:"command"`
	Cases   []GoBenchResult `json:"cases"`
	Output  string          `json:"output"`
}

// GoBenchResult is one sub-benchmark over -count runs: the median of the
// per-run mean ns/op (testing.B reports a mean per run, not a percentile).
type GoBenchResult struct {
	Name          string    `json:"name"`
	NsPerOp       []float64 `json:"ns_per_op"`
	MedianNsPerOp float64   `json:"median_ns_per_op"`
	MaxNsPerOp    float64   `json:"max_ns_per_op"`
	AllocsPerOp   float64   `json:"allocs_per_op"`
	P50Ns         []float64 `json:"p50_ns,omitempty"` // per run, from the benchmark's own per-fetch timing
	P99Ns         []float64 `json:"p99_ns,omitempty"`
	MedianP50Ns   float64   `json:"median_p50_ns,omitempty"`
	MedianP99Ns   float64   `json:"median_p99_ns,omitempty"`
	BytesPerOp    float64   `json:"bytes_per_op"`
}

// benchLine is a result line: name, iterations, then "value unit" pairs.
var (
	benchLine   = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)
	benchMetric = regexp.MustCompile(`([\d.e+]+) (\S+)`)
)

func bundleFetchBench(ctx context.Context, root string) (*GoBench, error) {
	args := []string{"test", "-count=5", "-run", "^$", "-bench", "BenchmarkFetchBundle", "-benchmem", "./internal/bundlesource"}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	gb := &GoBench{Command: "go " + strings.Join(args, " "), Output: tail(string(out), 40)}
	if err != nil {
		return gb, fmt.Errorf("%w\n%s", err, tail(string(out), 20))
	}
	byName := map[string]*GoBenchResult{}
	var order []string
	for _, line := range strings.Split(string(out), "\n") {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		r := byName[m[1]]
		if r == nil {
			r = &GoBenchResult{Name: m[1]}
			byName[m[1]] = r
			order = append(order, m[1])
		}
		for _, kv := range benchMetric.FindAllStringSubmatch(m[2], -1) {
			v, _ := strconv.ParseFloat(kv[1], 64)
			switch kv[2] {
			case "ns/op":
				r.NsPerOp = append(r.NsPerOp, v)
			case "B/op":
				r.BytesPerOp = v
			case "allocs/op":
				r.AllocsPerOp = v
			case "p50-ns":
				r.P50Ns = append(r.P50Ns, v)
			case "p99-ns":
				r.P99Ns = append(r.P99Ns, v)
			}
		}
	}
	sort.Strings(order)
	for _, name := range order {
		r := byName[name]
		r.MedianNsPerOp = median(r.NsPerOp)
		r.MedianP50Ns, r.MedianP99Ns = median(r.P50Ns), median(r.P99Ns)
		for _, v := range r.NsPerOp {
			r.MaxNsPerOp = max(r.MaxNsPerOp, v)
		}
		gb.Cases = append(gb.Cases, *r)
	}
	if len(gb.Cases) == 0 {
		return gb, fmt.Errorf("no benchmark lines in the output")
	}
	return gb, nil
}
