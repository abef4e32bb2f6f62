package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

const (
	etcdReadyTimeout      = 30 * time.Second
	apiServerReadyTimeout = 90 * time.Second
	stopGrace             = 5 * time.Second
	startAttempts         = 4
)

// Cluster is one etcd + kube-apiserver pair on 127.0.0.1.
type Cluster struct {
	Name string
	Dir  string // Dir of the lab + "/" + Name: data, credentials, logs, kubeconfig
	Host string // https://127.0.0.1:PORT

	Token       string // bearer token of user "admin" (group system:masters)
	ViewerToken string // bearer token of user "viewer" (no groups, no RBAC grants)
	CACertPEM   []byte // CA that signed the apiserver's serving certificate
	Kubeconfig  string // kubeconfig with one context, cluster and user named Name

	EtcdURL      string // http://127.0.0.1:PORT
	EtcdPID      int
	APIServerPID int

	mu        sync.Mutex
	detach    bool
	etcdBin   string
	apiBin    string
	apiArgs   []string
	apiPort   int
	etcdPort  int
	auditPath string
	etcd, api *proc
	// etcdShared: etcd is the lab's one etcd (Options.SharedEtcd), which
	// this cluster's apiserver uses under its own prefix and never stops.
	etcdShared bool
}

// RESTConfig returns a client configuration for the admin user
// (system:masters). QPS and burst are raised so tests are not throttled
// client-side.
func (c *Cluster) RESTConfig() *rest.Config { return c.restConfig(c.Token) }

// ViewerRESTConfig returns a client configuration for user "viewer", who is
// authenticated but has no RBAC grants (requests beyond discovery are Forbidden).
func (c *Cluster) ViewerRESTConfig() *rest.Config { return c.restConfig(c.ViewerToken) }

func (c *Cluster) restConfig(token string) *rest.Config {
	return &rest.Config{
		Host:            c.Host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: append([]byte(nil), c.CACertPEM...)},
		QPS:             100,
		Burst:           200,
		Timeout:         30 * time.Second,
	}
}

// AuditLogPath is where the apiserver writes its audit log (JSON lines,
// Metadata level). The file exists only with Options.AuditLog.
func (c *Cluster) AuditLogPath() string { return filepath.Join(c.Dir, "audit.log") }

// EtcdLogPath is etcd's combined stdout and stderr.
func (c *Cluster) EtcdLogPath() string { return filepath.Join(c.Dir, "etcd.log") }

// APIServerLogPath is kube-apiserver's combined stdout and stderr.
func (c *Cluster) APIServerLogPath() string { return filepath.Join(c.Dir, "kube-apiserver.log") }

// startCluster prepares dir and starts etcd and kube-apiserver, retrying with
// new ports when one was taken between choosing and binding it. With
// sharedEtcd (Options.SharedEtcd) only the apiserver starts, on that etcd.
func startCluster(ctx context.Context, name, dir, etcdBin, apiBin string, opts Options, sharedEtcd *Cluster) (*Cluster, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	adminToken, err := randomHex(24)
	if err != nil {
		return nil, err
	}
	viewerToken, err := randomHex(24)
	if err != nil {
		return nil, err
	}
	files, caPEM, err := writeCredentials(dir, name, adminToken, viewerToken, opts.AuditLog)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: writing credentials: %w", name, err)
	}
	c := &Cluster{
		Name: name, Dir: dir, Token: adminToken, ViewerToken: viewerToken, CACertPEM: caPEM,
		Kubeconfig: filepath.Join(dir, "kubeconfig"),
		detach:     opts.Detach, etcdBin: etcdBin, apiBin: apiBin,
	}
	if opts.AuditLog {
		c.auditPath = c.AuditLogPath()
	}
	if sharedEtcd != nil {
		c.etcd, c.etcdShared, c.EtcdURL, c.EtcdPID = sharedEtcd.etcd, true, sharedEtcd.EtcdURL, sharedEtcd.EtcdPID
	}
	for attempt := 1; ; attempt++ {
		err := c.startOnce(ctx, files, opts)
		if err == nil {
			break
		}
		// The start error is what matters; a failure to stop is in the logs.
		_ = c.stopProcs()
		if errors.Is(err, errAddrInUse) && attempt < startAttempts && ctx.Err() == nil {
			continue
		}
		return nil, fmt.Errorf("cluster %s: %w", name, err)
	}
	if err := writeKubeconfig(c.Kubeconfig, []*Cluster{c}); err != nil {
		_ = c.stopProcs()
		return nil, fmt.Errorf("cluster %s: writing kubeconfig: %w", name, err)
	}
	return c, nil
}

func (c *Cluster) startOnce(ctx context.Context, files clusterFiles, opts Options) error {
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	c.apiPort = ports[2]
	c.Host = "https://127.0.0.1:" + strconv.Itoa(c.apiPort)
	if !c.etcdShared {
		if err := c.startEtcd(ctx, ports[0], ports[1]); err != nil {
			return err
		}
	}

	c.apiArgs = []string{
		"--etcd-servers=" + c.EtcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(c.apiPort),
		"--cert-dir=" + filepath.Join(c.Dir, "certs"),
		"--tls-cert-file=" + files.servingCert,
		"--tls-private-key-file=" + files.servingKey,
		"--token-auth-file=" + files.tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + files.saKey,
		"--service-account-signing-key-file=" + files.saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		// No controller-manager creates the "default" ServiceAccount, so the
		// ServiceAccount admission plugin would refuse every pod.
		"--disable-admission-plugins=ServiceAccount",
		"--profiling=false",
	}
	if opts.AuditLog {
		c.apiArgs = append(c.apiArgs,
			"--audit-policy-file="+files.auditPolicy,
			"--audit-log-path="+c.auditPath,
			"--audit-log-format=json",
			"--audit-log-mode=blocking",
			"--audit-log-maxsize=100", // MB, then rotate (the apiserver's own lease updates add up in a long demo)
			"--audit-log-maxbackup=1",
		)
	}
	if c.etcdShared {
		// Each apiserver of a shared etcd keeps its objects under its own prefix.
		c.apiArgs = append(c.apiArgs, "--etcd-prefix=/registry-"+c.Name)
	}
	c.apiArgs = append(c.apiArgs, opts.APIServerFlags...)
	return c.startAPIServer(ctx)
}

// startEtcd starts c's etcd on the given ports and waits until it answers.
func (c *Cluster) startEtcd(ctx context.Context, port, peerPort int) error {
	c.etcdPort = port
	c.EtcdURL = "http://127.0.0.1:" + strconv.Itoa(c.etcdPort)
	dataDir := filepath.Join(c.Dir, "etcd-data")
	if err := os.RemoveAll(dataDir); err != nil {
		return fmt.Errorf("etcd: clearing %s: %w", dataDir, err)
	}
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peerPort)
	etcdArgs := []string{
		"--name=" + c.Name,
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + c.EtcdURL,
		"--advertise-client-urls=" + c.EtcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=" + c.Name + "=" + peerURL,
		"--initial-cluster-state=new",
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
	var err error
	c.etcd, err = startProc("etcd", c.etcdBin, etcdArgs, c.EtcdLogPath(), c.detach)
	if err != nil {
		return err
	}
	c.EtcdPID = c.etcd.pid()
	if err := c.waitEtcd(ctx); err != nil {
		return err
	}
	return nil
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	var err error
	c.api, err = startProc("kube-apiserver", c.apiBin, c.apiArgs, c.APIServerLogPath(), c.detach)
	if err != nil {
		return err
	}
	c.APIServerPID = c.api.pid()
	return c.waitAPIServer(ctx)
}

// waitEtcd waits until etcd answers /health and the answer comes from our
// process (it holds the listening socket), or fails quoting its log.
func (c *Cluster) waitEtcd(ctx context.Context) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, etcdReadyTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	var last string
	for {
		if c.etcd.exited() {
			return c.etcd.exitError()
		}
		resp, err := client.Get(c.EtcdURL + "/health")
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && listensOn(c.etcd.pid(), c.etcdPort) {
				return nil
			}
			last = fmt.Sprintf("GET /health: %d %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			if c.etcd.exited() {
				return c.etcd.exitError()
			}
			return fmt.Errorf("etcd (pid %d) not healthy at %s after %v (%w; last: %s); last lines of %s:\n%s",
				c.etcd.pid(), c.EtcdURL, time.Since(start).Round(time.Millisecond), ctx.Err(), last, c.etcd.logPath, fileTail(c.etcd.logPath, 25))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitAPIServer waits until GET /readyz answers 200 for the admin token, or
// fails quoting the apiserver's log.
func (c *Cluster) waitAPIServer(ctx context.Context) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, apiServerReadyTimeout)
	defer cancel()
	client, err := c.probeClient()
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	var last string
	for {
		if c.api.exited() {
			return c.api.exitError()
		}
		code, body, err := readyz(ctx, client, c.Host, c.Token)
		if err == nil && code == http.StatusOK {
			return nil
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("GET /readyz: %d %s", code, tailLines(body, 8))
		}
		select {
		case <-ctx.Done():
			if c.api.exited() {
				return c.api.exitError()
			}
			return fmt.Errorf("kube-apiserver (pid %d) not ready at %s after %v (%w; last: %s); last lines of %s:\n%s",
				c.api.pid(), c.Host, time.Since(start).Round(time.Millisecond), ctx.Err(), last, c.api.logPath, fileTail(c.api.logPath, 25))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *Cluster) probeClient() (*http.Client, error) {
	return probeClientFor(c.CACertPEM)
}

func probeClientFor(caPEM []byte) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no CA certificate in PEM")
	}
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
			DisableKeepAlives: true,
		},
	}, nil
}

func readyz(ctx context.Context, client *http.Client, host, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, host+"/readyz", nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<10))
	return resp.StatusCode, string(body), nil
}

// StopAPIServer kills the kube-apiserver (SIGKILL, as in a crash) and waits
// for it to exit. etcd keeps running; StartAPIServer brings it back.
func (c *Cluster) StopAPIServer() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.api == nil || c.api.exited() {
		return nil
	}
	if err := c.api.stop(0); err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	return nil
}

// StartAPIServer starts the kube-apiserver again on the same port, with the
// same etcd and credentials, and waits until it is ready.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.api != nil && !c.api.exited() {
		return fmt.Errorf("cluster %s: kube-apiserver (pid %d) is already running", c.Name, c.api.pid())
	}
	if c.etcd == nil || c.etcd.exited() {
		return fmt.Errorf("cluster %s: etcd is not running", c.Name)
	}
	var err error
	// The port was ours a moment ago; it can linger briefly after a kill.
	for attempt := 1; ; attempt++ {
		err = c.startAPIServer(ctx)
		if err == nil {
			return nil
		}
		_ = c.api.stop(0)
		if !errors.Is(err, errAddrInUse) || attempt == 5 || ctx.Err() != nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("cluster %s: restarting: %w", c.Name, err)
}

// FreezeAPIServer stops the kube-apiserver (SIGSTOP) without killing it, and
// returns once the kernel reports it stopped (a busy process's threads stop
// some time after the signal): its port still accepts connections (the
// kernel completes them) but nothing answers, as with a server hung in a
// long pause. ThawAPIServer resumes it.
func (c *Cluster) FreezeAPIServer() error {
	if err := c.signalAPIServer(syscall.SIGSTOP); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	for !procStopped(c.APIServerPID) {
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster %s: kube-apiserver (pid %d) not stopped 10s after SIGSTOP", c.Name, c.APIServerPID)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// procStopped reports whether /proc says pid is stopped by a signal (state T).
func procStopped(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command, which is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'T'
}

// ThawAPIServer resumes a kube-apiserver FreezeAPIServer stopped (SIGCONT).
func (c *Cluster) ThawAPIServer() error { return c.signalAPIServer(syscall.SIGCONT) }

func (c *Cluster) signalAPIServer(sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.api == nil || c.api.exited() {
		return fmt.Errorf("cluster %s: kube-apiserver is not running", c.Name)
	}
	if err := c.api.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("cluster %s: kube-apiserver (pid %d): %s: %w", c.Name, c.api.pid(), sig, err)
	}
	return nil
}

// Ready reports whether the apiserver answers /readyz with 200 now.
func (c *Cluster) Ready(ctx context.Context) error {
	client, err := c.probeClient()
	if err != nil {
		return err
	}
	code, body, err := readyz(ctx, client, c.Host, c.Token)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("GET %s/readyz: %d %s", c.Host, code, tailLines(body, 8))
	}
	return nil
}

// stopProcs stops the apiserver, then etcd.
func (c *Cluster) stopProcs() error {
	var errs []error
	if c.api != nil {
		errs = append(errs, c.api.stop(stopGrace))
	}
	if c.etcd != nil && !c.etcdShared {
		errs = append(errs, c.etcd.stop(stopGrace))
	}
	return errors.Join(errs...)
}

// writeKubeconfig writes one context per cluster, each named after its
// cluster, with the admin token.
func writeKubeconfig(path string, clusters []*Cluster) error {
	return writeKubeconfigWith(path, clusters, func(c *Cluster) string { return c.Token })
}

// writeKubeconfigWith writes one context per cluster, each named after its
// cluster and authenticating with token(cluster); the first is current.
func writeKubeconfigWith(path string, clusters []*Cluster, token func(*Cluster) string) error {
	cfg := clientcmdapi.NewConfig()
	for _, c := range clusters {
		cfg.Clusters[c.Name] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.CACertPEM}
		cfg.AuthInfos[c.Name] = &clientcmdapi.AuthInfo{Token: token(c)}
		cfg.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: c.Name}
		if cfg.CurrentContext == "" {
			cfg.CurrentContext = c.Name
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*cfg, path)
}

// startSharedEtcd starts the one etcd of a lab whose apiservers share it
// (Options.SharedEtcd), retrying with new ports like startCluster.
func startSharedEtcd(ctx context.Context, dir, etcdBin string, detach bool) (*Cluster, error) {
	e := &Cluster{Name: "etcd", Dir: dir, etcdBin: etcdBin, detach: detach}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("shared etcd: %w", err)
	}
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(2)
		if err == nil {
			err = e.startEtcd(ctx, ports[0], ports[1])
		}
		if err == nil {
			return e, nil
		}
		_ = e.stopProcs()
		if errors.Is(err, errAddrInUse) && attempt < startAttempts && ctx.Err() == nil {
			continue
		}
		return nil, fmt.Errorf("shared etcd: %w", err)
	}
}
