// Package harness runs real local Kubernetes API servers (etcd +
// kube-apiserver pairs on 127.0.0.1) for acceptance tests and for `make demo`.
//
// Binaries are built from pinned Go modules by scripts/tool.sh into a cache
// outside the repository; nothing here is mocked. There is no kubelet,
// scheduler or controller-manager: pods stay Pending, namespaces get no
// default ServiceAccount, and namespace deletion never finishes. Where a
// kubelet's answer is needed, the harness gives it itself: it reports the
// Pods it creates running, requests their ServiceAccount tokens, and
// internal/testkit/cmd/ztpodattestor tells a spire-agent which Pod a process runs in
// (see StartPodWorkload).
package harness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
)

// ModulePath is the module whose go.mod marks the repository root.
const ModulePath = "github.com/ztfabric/terraform-provider-zerotrust"

// RepoRoot walks up from the working directory to the directory whose go.mod
// declares ModulePath.
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("harness: working directory: %w", err)
	}
	for dir := wd; ; {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && goModModule(data) == ModulePath {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("harness: no go.mod declaring module %s in %s or any parent directory", ModulePath, wd)
		}
		dir = parent
	}
}

// goModModule returns the module path declared by a go.mod file's contents.
func goModModule(data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], "\"`")
		}
	}
	return ""
}

var toolCache struct {
	sync.Mutex
	paths map[string]string
}

// Tool returns the absolute path of a pinned tool binary (kube-apiserver,
// etcd, spire-server, spire-controller-manager, terraform), building it on
// first use through <root>/scripts/tool.sh. Results are cached per process.
func Tool(name string) (string, error) {
	toolCache.Lock()
	p, ok := toolCache.paths[name]
	toolCache.Unlock()
	if ok {
		return p, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	script := filepath.Join(root, "scripts", "tool.sh")
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("harness: tool %s: %w", name, err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(script, name)
	cmd.Dir = root
	cmd.Env = toolEnv()
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("harness: scripts/tool.sh %s failed (%v); stderr tail:\n%s", name, err, tailLines(stderr.String(), 30))
	}
	path := strings.TrimSpace(lastLine(stdout.String()))
	if path == "" || !filepath.IsAbs(path) {
		return "", fmt.Errorf("harness: scripts/tool.sh %s printed %q, not an absolute path; stderr tail:\n%s", name, stdout.String(), tailLines(stderr.String(), 30))
	}
	if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("harness: scripts/tool.sh %s printed %s, which is not an executable file", name, path)
	}
	toolCache.Lock()
	if toolCache.paths == nil {
		toolCache.paths = map[string]string{}
	}
	toolCache.paths[name] = path
	toolCache.Unlock()
	return path, nil
}

// toolEnv is the environment of scripts/tool.sh and of the go commands the
// harness runs. Tests often run with a temporary HOME; tool.sh and the go
// command derive their caches from HOME, so a HOME under the temp dir would
// mean a cold rebuild of every tool (~15 min) and a module download. In that
// case the account's real home (from the password database) provides the
// caches, unless ZT_CACHE_DIR, XDG_CACHE_HOME, GOMODCACHE, GOCACHE or GOENV
// say otherwise.
func toolEnv() []string {
	env := os.Environ()
	home := os.Getenv("HOME")
	tmp := filepath.Clean(os.TempDir()) + string(filepath.Separator)
	if home != "" && !strings.HasPrefix(filepath.Clean(home)+string(filepath.Separator), tmp) {
		return env
	}
	u, err := user.Current()
	if err != nil || u.HomeDir == "" || u.HomeDir == home {
		return env
	}
	set := func(key, value string) {
		if os.Getenv(key) == "" {
			env = append(env, key+"="+value)
		}
	}
	if os.Getenv("XDG_CACHE_HOME") == "" {
		set("ZT_CACHE_DIR", filepath.Join(u.HomeDir, ".cache", "terraform-provider-zerotrust"))
		set("GOCACHE", filepath.Join(u.HomeDir, ".cache", "go-build"))
	}
	if os.Getenv("GOPATH") == "" {
		set("GOMODCACHE", filepath.Join(u.HomeDir, "go", "pkg", "mod"))
	}
	if os.Getenv("XDG_CONFIG_HOME") == "" {
		set("GOENV", filepath.Join(u.HomeDir, ".config", "go", "env"))
	}
	return env
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// tailLines returns the last n lines of s.
func tailLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// fileTail returns the last n lines of a file (reading at most its last 64 KiB).
func fileTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	defer f.Close()
	const tailBytes = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > tailBytes {
		if _, err := f.Seek(st.Size()-tailBytes, 0); err != nil {
			return fmt.Sprintf("(cannot read %s: %v)", path, err)
		}
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 4*n {
			lines = lines[len(lines)-n:]
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return fmt.Sprintf("(%s is empty)", path)
	}
	return strings.Join(lines, "\n")
}

var errAddrInUse = errors.New("address already in use")
