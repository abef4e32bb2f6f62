package main

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/fastpath"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// provider is how one provider is installed in the filesystem mirror.
type provider struct {
	source  string // registry.terraform.io/<namespace>/<type>
	local   string // local name in required_providers
	version string // exact version, as the mirror's zip names it
	bin     string
}

// tfEnv is one Terraform CLI setup: a private HOME, a CLI config whose only
// installation method is a filesystem mirror holding the three providers at
// exact versions, and checkpoint calls disabled.
type tfEnv struct {
	terraform string
	version   string // "1.16.0"
	work      string
	env       []string
	providers map[string]provider // by target
	root      string
	// dirEnv is added to env for the commands run in a directory (a
	// target's configuration): ZEROTRUST_FASTPATH=off for
	// targetZerotrustFramework.
	dirEnv sync.Map // dir -> []string
}

func newTFEnv(work, terraform string, bins map[string]string, root string) (*tfEnv, error) {
	kv, err := pinnedVersion(root, "terraform-provider-kubernetes", "github.com/hashicorp/terraform-provider-kubernetes")
	if err != nil {
		return nil, err
	}
	cv, err := pinnedVersion(root, "terraform-provider-kubectl", "github.com/alekc/terraform-provider-kubectl")
	if err != nil {
		return nil, err
	}
	e := &tfEnv{root: root, terraform: terraform, version: cliVersion(context.Background(), terraform), work: work, providers: map[string]provider{
		targetZerotrust: {source: "registry.terraform.io/ztfabric/zerotrust", local: "zerotrust", version: "0.0.1", bin: bins[targetZerotrust]},
		// The same provider, run with its fast path off (dirEnv).
		targetZerotrustFramework: {source: "registry.terraform.io/ztfabric/zerotrust", local: "zerotrust", version: "0.0.1", bin: bins[targetZerotrust]},
		targetPluginFloor:        {source: "registry.terraform.io/ztfabric/ztfloor", local: "ztfloor", version: "0.0.1", bin: bins[targetPluginFloor]},
		targetKubernetes:         {source: "registry.terraform.io/hashicorp/kubernetes", local: "kubernetes", version: strings.TrimPrefix(kv, "v"), bin: bins[targetKubernetes]},
		targetKubectl:            {source: "registry.terraform.io/alekc/kubectl", local: "kubectl", version: strings.TrimPrefix(cv, "v"), bin: bins[targetKubectl]},
	}}
	mirror := filepath.Join(work, "mirror")
	for t, p := range e.providers {
		if p.bin == "" { // target not selected
			delete(e.providers, t)
			continue
		}
		if err := packProvider(mirror, p); err != nil {
			return nil, err
		}
	}
	home := filepath.Join(work, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	cliConfig := filepath.Join(work, "terraformrc")
	cfg := fmt.Sprintf("disable_checkpoint = true\nprovider_installation {\n  filesystem_mirror {\n    path = %q\n  }\n}\n", mirror)
	if err := os.WriteFile(cliConfig, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	e.env = []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"TF_CLI_CONFIG_FILE=" + cliConfig,
		"CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1",
		"KUBECACHEDIR=" + filepath.Join(home, ".kube", "cache"),
		"TMPDIR=" + os.TempDir(),
	}
	return e, nil
}

// withTerraform is e's setup for another terraform binary, in its own
// scratch directory (state and configurations are per CLI: an older
// Terraform refuses state a newer one wrote).
func (e *tfEnv) withTerraform(work, terraform string) (*tfEnv, error) {
	bins := map[string]string{}
	for t, p := range e.providers {
		bins[t] = p.bin
	}
	return newTFEnv(work, terraform, bins, e.root)
}

// pinnedVersion reads the version tools/<tool>/go.mod requires module at.
func pinnedVersion(root, tool, module string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, "tools", tool, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == module {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("tools/%s/go.mod does not require %s", tool, module)
}

// object is one ClusterFederatedTrustDomain of the benchmark.
type object struct {
	key, cluster, name, td string
}

// targetTags give each target its own object names and trust domains, all of
// the same length, so objects one target keeps between runs (see schedule)
// never collide with another's: SPIRE wants trust domains unique, and
// zerotrust checks that before it creates an object.
var targetTags = map[string]string{targetZerotrust: "zt", targetZerotrustFramework: "zf", targetPluginFloor: "pf", targetFloor: "tf", targetKubernetes: "k8", targetKubectl: "kc"}

func objects(target string, n int) []object {
	tag := targetTags[target]
	out := make([]object, n)
	for i := range out {
		out[i] = object{
			key:     fmt.Sprintf("o%04d", i),
			cluster: clusterNames[i%len(clusterNames)],
			name:    fmt.Sprintf("bench-%s-td%04d", tag, i),
			td:      fmt.Sprintf("td%04d.%s.bench.example.org", i, tag),
		}
	}
	return out
}

// prepare writes the configuration of target at n objects into its own
// directory and runs terraform init there (not timed).
func (e *tfEnv) prepare(ctx context.Context, lab *harness.Lab, target string, n int) (string, error) {
	dir := filepath.Join(e.work, "cfg", fmt.Sprintf("%s-%d", target, n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if target == targetZerotrustFramework {
		e.dirEnv.Store(dir, []string{fastpath.EnvSwitch + "=off"})
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(e.config(lab, target, n)), 0o644); err != nil {
		return "", err
	}
	if out, err := e.tf(ctx, dir, 10*time.Minute, "init", "-input=false", "-no-color"); err != nil {
		return "", fmt.Errorf("terraform init: %w\n%s", err, tail(out, 40))
	}
	return dir, nil
}

// config is the Terraform configuration of one target. All carry the same
// values: name, trust domain, bundle endpoint URL, https_spiffe profile and
// endpoint SPIFFE ID, spread round-robin over the clusters (the values of
// objects(target, n)).
//
// Every configuration is the leanest Terraform offers for that shape: count
// with the values computed inline from count.index. A for_each over a large
// local map with per-instance lookups, which the first version of this
// benchmark used, costs Terraform itself seconds at N=1000 (7.5 s for
// terraform_data alone) and so hid the providers' share in the floor.
func (e *tfEnv) config(lab *harness.Lab, target string, n int) string {
	var b strings.Builder
	if p, ok := e.providers[target]; ok {
		fmt.Fprintf(&b, "terraform {\n  required_providers {\n    %s = {\n      source  = %q\n      version = \"= %s\"\n    }\n  }\n}\n\n",
			p.local, strings.TrimPrefix(p.source, "registry.terraform.io/"), p.version)
	}
	tag := targetTags[target]
	// idx is the object's index i in objects(): count.index, or for the
	// per-cluster blocks of the peers count.index*clusters + cluster.
	values := func(idx string) (name, td, url, id string) {
		return fmt.Sprintf(`format("bench-%s-td%%04d", %s)`, tag, idx),
			fmt.Sprintf(`format("td%%04d.%s.bench.example.org", %s)`, tag, idx),
			fmt.Sprintf(`format("https://td%%04d.%s.bench.example.org:8443", %s)`, tag, idx),
			fmt.Sprintf(`format("spiffe://td%%04d.%s.bench.example.org/spire/server", %s)`, tag, idx)
	}
	quoted := make([]string, len(clusterNames))
	for i, c := range clusterNames {
		quoted[i] = strconv.Quote(c)
	}
	switch target {
	case targetFloor:
		name, td, url, id := values("count.index")
		fmt.Fprintf(&b, `resource "terraform_data" "cftd" {
  count = %d
  input = {
    cluster             = element([%s], count.index)
    name                = %s
    trust_domain        = %s
    bundle_endpoint_url = %s
    bundle_endpoint_profile = {
      type               = "https_spiffe"
      endpoint_spiffe_id = %s
    }
    delete_bundle_on_destroy = false
  }
}
`, n, strings.Join(quoted, ", "), name, td, url, id)
	case targetZerotrust, targetZerotrustFramework, targetPluginFloor:
		p := e.providers[target]
		c0 := lab.Cluster(clusterNames[0])
		fmt.Fprintf(&b, "provider %q {\n  kubernetes = { config_path = %q, config_context = %q }\n  clusters = {\n", p.local, c0.Kubeconfig, c0.Name)
		for _, name := range clusterNames {
			c := lab.Cluster(name)
			fmt.Fprintf(&b, "    %s = { config_path = %q, config_context = %q }\n", name, c.Kubeconfig, name)
		}
		b.WriteString("  }\n}\n\n")
		name, td, url, id := values("count.index")
		// The lab runs no SPIRE server: the bundle is not deleted on destroy.
		fmt.Fprintf(&b, `resource "%s_federated_trust_domain" "cftd" {
  count               = %d
  cluster             = element([%s], count.index)
  name                = %s
  trust_domain        = %s
  bundle_endpoint_url = %s
  bundle_endpoint_profile = {
    type               = "https_spiffe"
    endpoint_spiffe_id = %s
  }
  delete_bundle_on_destroy = false
}
`, p.local, n, strings.Join(quoted, ", "), name, td, url, id)
	case targetKubernetes, targetKubectl:
		// These providers reach one cluster per provider block: one alias and
		// one resource block per cluster, holding every len(clusterNames)-th object.
		p := e.providers[target]
		for j, cname := range clusterNames {
			c := lab.Cluster(cname)
			fmt.Fprintf(&b, "provider %q {\n  alias          = %q\n  config_path    = %q\n  config_context = %q\n", p.local, cname, c.Kubeconfig, cname)
			if target == targetKubectl {
				b.WriteString("  load_config_file = true\n")
			}
			b.WriteString("}\n\n")
			count := (n - j + len(clusterNames) - 1) / len(clusterNames)
			name, td, url, id := values(fmt.Sprintf("count.index * %d + %d", len(clusterNames), j))
			manifest := fmt.Sprintf(`{
    apiVersion = "spire.spiffe.io/v1alpha1"
    kind       = "ClusterFederatedTrustDomain"
    metadata   = { name = %s }
    spec = {
      trustDomain       = %s
      bundleEndpointURL = %s
      bundleEndpointProfile = {
        type             = "https_spiffe"
        endpointSPIFFEID = %s
      }
    }
  }`, name, td, url, id)
			if target == targetKubernetes {
				fmt.Fprintf(&b, "resource \"kubernetes_manifest\" %q {\n  provider = kubernetes.%s\n  count    = %d\n  manifest = %s\n}\n\n", cname, cname, count, manifest)
			} else {
				fmt.Fprintf(&b, "resource \"kubectl_manifest\" %q {\n  provider  = kubectl.%s\n  count     = %d\n  yaml_body = yamlencode(%s)\n}\n\n", cname, cname, count, manifest)
			}
		}
	}
	return b.String()
}

// phaseSample is one timed terraform command.
type phaseSample struct {
	Phase    string  `json:"phase"`
	Wall     float64 `json:"wall_s"`
	CPUTotal float64 `json:"cpu_total_s"` // terraform + provider processes (the terraform process's rusage, its waited-for children included)
	// CPUOthers is the CPU of the bench's other children that ended during
	// the command: the lab's short-lived processes (the spire-server CLI an
	// exec endpoint runs, a workload's dial), which the long-running lab
	// processes' /proc counters do not see.
	CPUOthers    float64        `json:"cpu_others_s"`
	CPUProvider  float64        `json:"cpu_provider_s"` // provider processes only (sampled from /proc)
	ProviderRSS  int64          `json:"provider_peak_rss_bytes"`
	ProviderAnon int64          `json:"provider_peak_anon_bytes"` // largest sampled RssAnon of one provider process
	Procs        int            `json:"provider_processes"`
	PlanEmpty    *bool          `json:"plan_empty,omitempty"`
	API          map[string]int `json:"api_requests"`
}

// phaseArgs are the terraform commands of the phases a run times.
var phaseArgs = map[string][]string{
	"apply":   {"apply", "-input=false", "-no-color", "-auto-approve"},
	"plan":    {"plan", "-input=false", "-no-color", "-detailed-exitcode", "-lock=false"},
	"destroy": {"destroy", "-input=false", "-no-color", "-auto-approve"},
}

// cycle runs the given phases in order: normally apply, plan (with refresh)
// on the unchanged state, and destroy.
func (e *tfEnv) cycle(ctx context.Context, dir, target string, n int, audit *auditReader, limit time.Duration, phases []string) ([]phaseSample, error) {
	var out []phaseSample
	for _, phase := range phases {
		audit.mark()
		s, stdout, err := e.measured(ctx, dir, limit, phaseArgs[phase]...)
		if phase == "plan" {
			// -detailed-exitcode: 0 = no changes, 2 = changes present.
			var ee *exec.ExitError
			empty := err == nil
			if errors.As(err, &ee) && ee.ExitCode() == 2 {
				err = nil
			}
			s.PlanEmpty = &empty
			if !empty && err == nil {
				logf("warning: %s N=%d: plan after apply is not empty:\n%s", target, n, tail(stdout, 30))
			}
		}
		if err != nil {
			return nil, fmt.Errorf("terraform %s: %w\n%s", phase, err, tail(stdout, 40))
		}
		// The apiserver writes the audit event after the response; give the
		// last ones a moment to land.
		time.Sleep(300 * time.Millisecond)
		s.API, err = audit.collect()
		if err != nil {
			return nil, err
		}
		s.Phase = phase
		out = append(out, s)
	}
	return out, nil
}

// measured runs one terraform command, timing its wall clock, the CPU of
// terraform and every child it waited for (rusage), and separately the CPU
// and peak RSS of its provider processes, sampled from /proc while it runs.
func (e *tfEnv) measured(ctx context.Context, dir string, limit time.Duration, args ...string) (phaseSample, string, error) {
	var s phaseSample
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := e.command(ctx, dir, args...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	before := childrenCPU()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return s, "", err
	}
	sampler := startSampler(cmd.Process.Pid)
	err := cmd.Wait()
	s.Wall = time.Since(start).Seconds()
	// The terraform process's own rusage (wait4 adds the providers it
	// waited for): the bench's children as a whole would also count every
	// process the bench ran meanwhile (exec endpoints, handshake polls).
	if ps := cmd.ProcessState; ps != nil {
		s.CPUTotal = (ps.UserTime() + ps.SystemTime()).Seconds()
	}
	s.CPUOthers = max(0, childrenCPU()-before-s.CPUTotal)
	s.CPUProvider, s.ProviderRSS, s.ProviderAnon, s.Procs = sampler.stop()
	return s, buf.String(), err
}

// tf runs an untimed terraform command.
func (e *tfEnv) tf(ctx context.Context, dir string, limit time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out, err := e.command(ctx, dir, args...).CombinedOutput()
	return string(out), err
}

// command is a terraform command in dir that, when ctx ends (interrupt or
// timeout), gets an interrupt first: terraform then stops its provider
// processes itself, where a kill would leave them running.
func (e *tfEnv) command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.terraform, args...)
	cmd.Dir = dir
	cmd.Env = e.env
	if extra, ok := e.dirEnv.Load(dir); ok {
		add, _ := extra.([]string) // dirEnv holds nothing else
		cmd.Env = append(slices.Clone(e.env), add...)
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second // then killed
	return cmd
}

// childrenCPU is the user+system CPU seconds of every child this process
// has waited for (and of their waited-for descendants).
func childrenCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return tvSeconds(ru.Utime) + tvSeconds(ru.Stime)
}

func tvSeconds(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

func runCmd(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail(string(out), 30))
	}
	return nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// packProvider puts p into the mirror in the packed layout, the zip a
// registry serves, so that `terraform init` unpacks the binary the way it
// installs any provider. Not a copy of our own: how a binary was written
// decides how much of it a process maps. A file written in one large write
// sits in the page cache in large folios that a page fault maps whole: 28.6
// MiB resident at the start of the provider against 18.3 MiB for the same
// binary written in small pieces, as Terraform's unzip writes it (this
// machine, Linux 6.18, ext4). The peak RSS measured is the user's.
func packProvider(mirror string, p provider) error {
	typ := p.source[strings.LastIndex(p.source, "/")+1:]
	dir := filepath.Join(mirror, p.source)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bin, err := os.Open(p.bin)
	if err != nil {
		return err
	}
	defer bin.Close()
	out, err := os.Create(filepath.Join(dir, fmt.Sprintf("terraform-provider-%s_%s_linux_amd64.zip", typ, p.version)))
	if err != nil {
		return err
	}
	zw := zip.NewWriter(out)
	hdr := &zip.FileHeader{Name: "terraform-provider-" + typ + "_v" + p.version, Method: zip.Deflate}
	hdr.SetMode(0o755)
	w, err := zw.CreateHeader(hdr)
	if err == nil {
		_, err = io.Copy(w, bin)
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
