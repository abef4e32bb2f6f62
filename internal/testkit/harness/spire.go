package harness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
)

// Defaults of SpireOptions, matching what the OpenShift Zero Trust Workload
// Identity Manager operator deploys (and the provider's `spire` defaults).
const (
	DefaultSpireNamespace = "zero-trust-workload-identity-manager"
	DefaultSpireClassName = "zero-trust-workload-identity-manager-spire"
	SpirePodName          = "spire-server-0"
	SpireContainerName    = "spire-server"
	SpireBundleConfigMap  = "spire-bundle"
)

const (
	spireReadyTimeout = 60 * time.Second
	spireStopGrace    = 5 * time.Second
)

// SpireOptions configures StartSpire.
type SpireOptions struct {
	// TrustDomain of the server, e.g. "east.zt.test". Required.
	TrustDomain string
	// Namespace of the SPIRE server's Pod and (except with Helm) bundle
	// ConfigMap. Default DefaultSpireNamespace.
	Namespace string
	// ClassName is spire-controller-manager's className. Default
	// DefaultSpireClassName.
	ClassName string
	// WebProfile serves the bundle endpoint with the https_web profile (a
	// certificate for 127.0.0.1 from a test CA, Spire.WebCACertPEM) instead
	// of https_spiffe.
	WebProfile bool
	// ControllerManager also runs spire-controller-manager against the
	// cluster, reconciling ClusterFederatedTrustDomains into this server.
	ControllerManager bool
	// FederationRefreshHint is the refresh hint the bundle endpoint serves
	// (`federation.bundle_endpoint.refresh_hint`); 0 keeps SPIRE's default of
	// 5 minutes. Peers poll at a quarter of it, but never use a hint below 1
	// minute (bundleutil.MinimumRefreshHint), so 1m (every 15 s) is the
	// fastest a test can make federation refresh.
	FederationRefreshHint time.Duration
	// X509SVIDTTL is `default_x509_svid_ttl`, the lifetime of workload, agent
	// and server SVIDs, which their holders renew at half of it; 0 means 1h.
	// Tests of a CA rotation shorten it so SVIDs move to a newly activated
	// authority within seconds rather than half an hour.
	X509SVIDTTL time.Duration
	// NoBundleEndpoint runs the server without a federation bundle endpoint:
	// nothing listens on BundleEndpointURL's port, as for SPIRE servers that
	// cannot reach each other, so only bundles set by `bundle set` federate.
	NoBundleEndpoint bool
	// Standalone runs only the SPIRE server process with its bundle
	// endpoint: no Kubernetes objects, no exec endpoint, no bundle ConfigMap,
	// no controller manager. The cluster may then be nil.
	Standalone bool
	// Dir holds configuration, data and logs. Default: <cluster dir>/spire-<namespace>
	// (standalone: spire-<trust domain>), or without a cluster a temporary
	// directory that Stop removes. Its data is cleared at start: every
	// StartSpire is a new installation, as every harness cluster is.
	Dir string
	// Detach lets spire-server and spire-controller-manager outlive this
	// process (own session, no Pdeathsig), for `ztlab up --spire`; State
	// records what StopFromState needs to stop them. The in-process exec
	// endpoint would die with this process: see ExecEndpointCommand.
	Detach bool
	// Helm lays the server out as the SPIFFE Helm chart (spiffe/spire) does
	// instead of as the Zero Trust Workload Identity Manager does: no
	// ZeroTrustWorkloadIdentityManager or SpireServer, but the server's
	// configuration ConfigMap, the controller manager's ConfigMap and the
	// federation Ingress of release HelmSpireRelease (see applyHelmObjects).
	// Namespace then defaults to HelmSpireNamespace and ClassName to the
	// chart's default, HelmSpireClassName; the bundle ConfigMap is in
	// HelmSpireBundleNamespace, and the chart's default ClusterSPIFFEIDs
	// exist as Helm made them (HelmClusterSPIFFEIDs). The bundle is
	// published as the chart's defaults publish it: SPIRE's BundlePublisher
	// "k8s_configmap" writes SPIFFE bundle JSON under HelmBundleKey, and
	// creates the ConfigMap itself (see HelmNotifier for the other case).
	Helm bool
	// HelmNotifier, only with Helm, publishes the bundle as the chart's
	// values notifier.k8sBundle.enabled=true and
	// bundlePublisher.k8sConfigMap.enabled=false do (the chart refuses both
	// at once): SPIRE's Notifier "k8sbundle" patches PEM certificates under
	// "bundle.crt" into the ConfigMap the chart creates. The operator's
	// layout always publishes this way.
	HelmNotifier bool
	// HelmFederatedTrustDomains, only with Helm, are the chart's
	// controllerManager.identities.clusterFederatedTrustDomains: each key
	// becomes a ClusterFederatedTrustDomain as Helm makes it (named
	// HelmObjectName(Namespace, key)).
	HelmFederatedTrustDomains map[string]HelmFederatedTrustDomain
	// HelmDisabledClusterSPIFFEIDs, only with Helm, are keys of
	// HelmClusterSPIFFEIDs whose chart value `enabled` is false: Helm makes
	// no such object. Disabling HelmDefaultClusterSPIFFEID leaves pods that
	// no other ClusterSPIFFEID selects without an entry.
	HelmDisabledClusterSPIFFEIDs []string
	// S3Publisher, only with Helm, adds SPIRE's BundlePublisher "aws_s3"
	// beside the chart's "k8s_configmap", publishing to the lab's object
	// storage (see S3Publisher, Spire.PublishedBundleURL).
	S3Publisher *S3Publisher
	// WebPKIRoots is a PEM file of the CAs the server trusts for Web PKI,
	// its SSL_CERT_FILE: what https_web fetches of peers' bundles and the
	// aws_s3 publisher check. Default with S3Publisher: its server's CA.
	WebPKIRoots string
	// ExecEndpointCommand, only with Detach, runs the exec endpoint as a
	// detached process of its own, so pod exec keeps reaching the real
	// spire-server after this process exits, as in tests: the argv of a
	// program that calls ExecEndpointMain with the arguments appended to it
	// (`ztlab exec-endpoint`: {"/path/to/ztlab", "exec-endpoint"}). The Node
	// and Pod are registered as in tests. Empty with Detach: no exec endpoint,
	// Node or Pod.
	ExecEndpointCommand []string
}

// Spire is a running SPIRE server (built from github.com/spiffe/spire) with
// its federation bundle endpoint on 127.0.0.1, and, unless standalone, the
// Kubernetes objects that make it look deployed in its cluster: a Node and
// Pod through which pod exec reaches the real binary, the bundle ConfigMap
// that SPIRE's own plugin keeps current (BundleKey), the
// ZeroTrustWorkloadIdentityManager and SpireServer `cluster` objects the
// operator would create (the SpireServer's bundle endpoint is the real one,
// so peers derive its URL from the cluster), and optionally the real
// spire-controller-manager.
type Spire struct {
	Cluster     *Cluster // nil for a standalone server started without a cluster
	TrustDomain string

	BundleEndpointURL string // https://127.0.0.1:PORT
	EndpointSPIFFEID  string // spiffe://<trust domain>/spire/server
	WebCACertPEM      []byte // CA of the bundle endpoint's certificate, with WebProfile
	// PublishedBundleURL is, with S3Publisher, where peers read the bundle
	// SPIRE publishes (https_web): the object's path-style URL.
	PublishedBundleURL string

	SocketPath string // the server API socket (admin CLI, controller manager)
	Dir        string

	// The Pod object through which exec reaches the real binary; empty when
	// standalone. Detached without ExecEndpointCommand, no Pod exists, but
	// Namespace is set.
	Namespace, PodName, Container string
	NodeName                      string
	// BundleConfigMap in BundleNamespace holds the bundle under BundleKey,
	// written by real SPIRE: "bundle.crt" (PEM) from its Notifier
	// "k8sbundle" in the operator's layout and with HelmNotifier,
	// HelmBundleKey (SPIFFE bundle JSON) from its BundlePublisher
	// "k8s_configmap" in the chart's default layout. BundleNamespace is
	// Namespace in the operator's layout and HelmSpireBundleNamespace in the
	// chart's, whose recommended layout publishes the bundle where the
	// agents run. All empty when standalone.
	BundleConfigMap, BundleNamespace, BundleKey string
	ClassName                                   string

	mu         sync.Mutex
	opts       SpireOptions
	bin        string
	serverArgs []string
	bundlePort int
	healthPort int
	apiPort    int
	server     *proc
	cm         *proc
	exec       *execEndpoint // in process (tests)
	execProc   *proc         // a detached process (ExecEndpointCommand)
	execPort   int           // the Node's kubelet port: where exec requests go
	sockDir    string
	removeDir  bool
	stopOnce   sync.Once
	stopErr    error
}

// StartSpire starts a SPIRE server for c (see Spire) and waits until it is
// ready, its bundle endpoint listens and, unless standalone, the bundle
// ConfigMap holds its bundle and spire-controller-manager is ready. On
// failure it stops what it started; the error names the failing component
// and quotes its log.
func StartSpire(ctx context.Context, c *Cluster, opts SpireOptions) (*Spire, error) {
	td, err := spiffeid.TrustDomainFromString(opts.TrustDomain)
	if err != nil {
		return nil, fmt.Errorf("spire: trust domain %q: %w", opts.TrustDomain, err)
	}
	if c == nil && !opts.Standalone {
		return nil, errors.New("spire: a cluster is required unless Standalone is set")
	}
	if opts.Standalone && opts.ControllerManager {
		return nil, errors.New("spire: a standalone server has no controller manager")
	}
	if opts.Standalone && opts.Helm {
		return nil, errors.New("spire: a standalone server has no cluster objects to lay out as the Helm chart does")
	}
	if (len(opts.HelmFederatedTrustDomains) > 0 || len(opts.HelmDisabledClusterSPIFFEIDs) > 0 || opts.HelmNotifier) && !opts.Helm {
		return nil, errors.New("spire: HelmFederatedTrustDomains, HelmDisabledClusterSPIFFEIDs and HelmNotifier are the Helm chart's values; set Helm too")
	}
	if opts.S3Publisher != nil && !opts.Helm {
		return nil, errors.New("spire: S3Publisher adds a BundlePublisher to the Helm chart's layout; set Helm too")
	}
	if opts.Standalone && opts.Detach {
		return nil, errors.New("spire: Detach is for servers of a cluster (ztlab up --spire), not standalone ones")
	}
	if len(opts.ExecEndpointCommand) > 0 && !opts.Detach {
		return nil, errors.New("spire: ExecEndpointCommand is for detached servers; others serve exec in process")
	}
	switch {
	case opts.Namespace != "":
	case opts.Helm:
		opts.Namespace = HelmSpireNamespace
	default:
		opts.Namespace = DefaultSpireNamespace
	}
	switch {
	case opts.ClassName != "":
	case opts.Helm:
		opts.ClassName = HelmSpireClassName(opts.Namespace)
	default:
		opts.ClassName = DefaultSpireClassName
	}
	s := &Spire{
		Cluster: c, TrustDomain: td.Name(), opts: opts, ClassName: opts.ClassName,
		EndpointSPIFFEID: "spiffe://" + td.Name() + "/spire/server", PublishedBundleURL: opts.S3Publisher.objectURL(td.Name()),
	}
	if !opts.Standalone {
		s.Namespace, s.PodName, s.Container = opts.Namespace, SpirePodName, SpireContainerName
		s.BundleConfigMap, s.BundleNamespace, s.BundleKey = SpireBundleConfigMap, opts.Namespace, NotifierBundleKey
		if opts.Helm {
			s.BundleNamespace = HelmSpireBundleNamespace
		}
		if s.publishes() {
			s.BundleKey = HelmBundleKey
		}
		s.NodeName = "spire-" + opts.Namespace
	}
	ok := false
	defer func() {
		if !ok {
			_ = s.Stop()
		}
	}()

	if s.bin, err = Tool("spire-server"); err != nil {
		return nil, fmt.Errorf("spire: %w", err)
	}
	if err := s.prepareDirs(); err != nil {
		return nil, fmt.Errorf("spire %s: %w", s.TrustDomain, err)
	}
	if !opts.Standalone {
		if err := s.createClusterObjects(ctx); err != nil {
			return nil, fmt.Errorf("spire %s: cluster %s: %w", s.TrustDomain, c.Name, err)
		}
	}
	if err := s.startFirst(ctx); err != nil {
		return nil, fmt.Errorf("spire %s: %w", s.TrustDomain, err)
	}
	if !opts.Standalone {
		// Only now is the bundle endpoint's port known.
		apply := s.applySpireServer
		if opts.Helm {
			apply = s.applyHelmObjects
		}
		if err := apply(ctx); err != nil {
			return nil, fmt.Errorf("spire %s: cluster %s: %w", s.TrustDomain, c.Name, err)
		}
		if err := s.waitBundleConfigMap(ctx); err != nil {
			return nil, fmt.Errorf("spire %s: %w", s.TrustDomain, err)
		}
		if err := s.waitPublishedBundle(ctx); err != nil {
			return nil, fmt.Errorf("spire %s: %w", s.TrustDomain, err)
		}
	}
	if !opts.Standalone {
		var err error
		switch {
		case !opts.Detach:
			err = s.startExec(ctx)
		case len(opts.ExecEndpointCommand) > 0:
			err = s.startExecProcess(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("spire %s: exec endpoint: %w", s.TrustDomain, err)
		}
	}
	if opts.ControllerManager {
		if err := s.startControllerManager(ctx); err != nil {
			return nil, fmt.Errorf("spire %s: %w", s.TrustDomain, err)
		}
	}
	ok = true
	return s, nil
}

// StartSpires starts a SPIRE server for each of clusters concurrently, with
// the options opts gives for it. When any fails it stops the others and
// returns every failure; otherwise the servers in the clusters' order.
func StartSpires(ctx context.Context, clusters []*Cluster, opts func(*Cluster) SpireOptions) ([]*Spire, error) {
	spires := make([]*Spire, len(clusters))
	errs := make([]error, len(clusters))
	var wg sync.WaitGroup
	for i, c := range clusters {
		wg.Go(func() { spires[i], errs[i] = StartSpire(ctx, c, opts(c)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, s := range spires {
			if s != nil {
				err = errors.Join(err, s.Stop())
			}
		}
		return nil, err
	}
	return spires, nil
}

func (s *Spire) prepareDirs() error {
	s.Dir = s.opts.Dir
	switch {
	case s.Dir != "":
	case s.Cluster != nil && s.opts.Standalone:
		s.Dir = filepath.Join(s.Cluster.Dir, "spire-"+s.TrustDomain)
	case s.Cluster != nil:
		s.Dir = filepath.Join(s.Cluster.Dir, "spire-"+s.opts.Namespace)
	default:
		d, err := os.MkdirTemp("", "zt-spire-")
		if err != nil {
			return err
		}
		s.Dir, s.removeDir = d, true
	}
	// A datastore left by an earlier installation would still hold the
	// bundles it was federated with.
	d, err := freshDataAndSocketDir(s.Dir, "zts-")
	if err != nil {
		return err
	}
	s.sockDir = d
	s.SocketPath = filepath.Join(d, "api.sock")
	if s.opts.WebProfile {
		ca, err := newTestCA("zerotrust-harness-web-ca-" + s.TrustDomain)
		if err != nil {
			return err
		}
		certPEM, keyPEM, err := ca.issueServing("bundle-endpoint." + s.TrustDomain)
		if err != nil {
			return err
		}
		s.WebCACertPEM = ca.certPEM
		if err := os.WriteFile(filepath.Join(s.Dir, "bundle-endpoint.crt"), certPEM, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(s.Dir, "bundle-endpoint.key"), keyPEM, 0o600); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(s.Dir, "web-ca.crt"), ca.certPEM, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// LogPath is the SPIRE server's combined stdout and stderr.
func (s *Spire) LogPath() string { return filepath.Join(s.Dir, "spire-server.log") }

// ControllerManagerLogPath is spire-controller-manager's combined output.
func (s *Spire) ControllerManagerLogPath() string {
	return filepath.Join(s.Dir, "spire-controller-manager.log")
}

// ExecLogPath lists the exec requests the exec endpoint served (and, for a
// detached endpoint, everything else the process printed).
func (s *Spire) ExecLogPath() string { return filepath.Join(s.Dir, "exec-endpoint.log") }

// startFirst picks ports, writes the configuration and starts the server,
// with new ports when one was taken between choosing and binding it.
func (s *Spire) startFirst(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(3)
		if err != nil {
			return err
		}
		s.apiPort, s.bundlePort, s.healthPort = ports[0], ports[1], ports[2]
		s.BundleEndpointURL = "https://127.0.0.1:" + strconv.Itoa(s.bundlePort)
		configPath := filepath.Join(s.Dir, "server.conf")
		if err := os.WriteFile(configPath, []byte(s.serverConfig()), 0o644); err != nil {
			return err
		}
		s.serverArgs = []string{"run", "-config", configPath}
		err = s.startServer(ctx)
		if err == nil {
			return nil
		}
		if s.server != nil {
			_ = s.server.stop(0)
		}
		if !errors.Is(err, errAddrInUse) || attempt == startAttempts || ctx.Err() != nil {
			return err
		}
	}
}

func (s *Spire) serverConfig() string {
	var b strings.Builder
	dataDir := filepath.Join(s.Dir, "data")
	fmt.Fprintf(&b, "server {\n")
	fmt.Fprintf(&b, "  bind_address = \"127.0.0.1\"\n  bind_port = \"%d\"\n", s.apiPort)
	fmt.Fprintf(&b, "  socket_path = %q\n  trust_domain = %q\n  data_dir = %q\n", s.SocketPath, s.TrustDomain, dataDir)
	svidTTL := s.opts.X509SVIDTTL
	if svidTTL == 0 {
		svidTTL = time.Hour
	}
	fmt.Fprintf(&b, "  log_level = \"DEBUG\"\n  ca_ttl = \"24h\"\n  default_x509_svid_ttl = %q\n", svidTTL)
	if !s.opts.NoBundleEndpoint {
		s.writeBundleEndpoint(&b)
	}
	b.WriteString("}\n\nplugins {\n")
	fmt.Fprintf(&b, "  DataStore \"sql\" {\n    plugin_data {\n      database_type = \"sqlite3\"\n      connection_string = %q\n    }\n  }\n",
		filepath.Join(dataDir, "datastore.sqlite3"))
	// A disk key manager (not memory) keeps the CA keys across StopServer and
	// StartServer: with fresh keys the restarted endpoint would present an
	// SVID that bundles read before the restart cannot verify.
	fmt.Fprintf(&b, "  KeyManager \"disk\" {\n    plugin_data {\n      keys_path = %q\n    }\n  }\n", filepath.Join(dataDir, "keys.json"))
	b.WriteString("  NodeAttestor \"join_token\" {\n    plugin_data {}\n  }\n")
	if !s.opts.Standalone {
		// Beside join_token (StartSpireAgent's default): agents started with
		// SpireAgentOptions.K8sPSAT attest as in a real cluster, with a bound
		// ServiceAccount token of their Pod that the server checks through the
		// cluster's TokenReview API; their SPIFFE ID then carries the Node's
		// UID, which is what spire-controller-manager makes the parent of
		// ClusterSPIFFEID entries.
		fmt.Fprintf(&b, "  NodeAttestor \"k8s_psat\" {\n    plugin_data {\n      clusters = {\n        %q = {\n"+
			"          service_account_allow_list = [%q]\n          kube_config_file = %q\n        }\n      }\n    }\n  }\n",
			s.Cluster.Name, s.Namespace+":"+SpireAgentServiceAccount, s.Cluster.Kubeconfig)
		s.writeBundlePlugin(&b)
		s.writeS3Publisher(&b)
	}
	b.WriteString("}\n\nhealth_checks {\n  listener_enabled = true\n  bind_address = \"127.0.0.1\"\n")
	fmt.Fprintf(&b, "  bind_port = \"%d\"\n  live_path = \"/live\"\n  ready_path = \"/ready\"\n}\n", s.healthPort)
	return b.String()
}

// writeBundleEndpoint writes the server's `federation` block.
func (s *Spire) writeBundleEndpoint(b *strings.Builder) {
	b.WriteString("  federation {\n    bundle_endpoint {\n")
	fmt.Fprintf(b, "      address = \"127.0.0.1\"\n      port = %d\n", s.bundlePort)
	if s.opts.FederationRefreshHint > 0 {
		fmt.Fprintf(b, "      refresh_hint = %q\n", s.opts.FederationRefreshHint)
	}
	if s.opts.WebProfile {
		fmt.Fprintf(b, "      profile \"https_web\" {\n        serving_cert_file {\n          cert_file_path = %q\n"+
			"          key_file_path = %q\n          file_sync_interval = \"1h\"\n        }\n      }\n",
			filepath.Join(s.Dir, "bundle-endpoint.crt"), filepath.Join(s.Dir, "bundle-endpoint.key"))
	} else {
		// SPIRE 1.15 wants the profile spelled out.
		b.WriteString("      profile \"https_spiffe\" {}\n")
	}
	b.WriteString("    }\n  }\n")
}

// startServer starts the spire-server process and waits until its health
// endpoint says ready and it listens on the bundle endpoint port.
func (s *Spire) startServer(ctx context.Context) error {
	var err error
	s.server, err = startProc("spire-server", s.bin, s.serverArgs, s.LogPath(), s.opts.Detach, s.serverEnv()...)
	if err != nil {
		return err
	}
	return s.waitServer(ctx)
}

func (s *Spire) waitServer(ctx context.Context) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, spireReadyTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	readyURL := "http://127.0.0.1:" + strconv.Itoa(s.healthPort) + "/ready"
	var last string
	for {
		if s.server.exited() {
			return s.server.exitError()
		}
		last = s.probeServer(ctx, client, readyURL)
		if last == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			if s.server.exited() {
				return s.server.exitError()
			}
			return fmt.Errorf("spire-server (pid %d) not ready after %v (%v; last: %s); last lines of %s:\n%s",
				s.server.pid(), time.Since(start).Round(time.Millisecond), ctx.Err(), last, s.LogPath(), fileTail(s.LogPath(), 25))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// probeServer returns "" when the server is ready, or what is missing.
func (s *Spire) probeServer(ctx context.Context, client *http.Client, readyURL string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, readyURL, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "GET " + readyURL + ": " + resp.Status
	}
	if !s.opts.NoBundleEndpoint && !listensOn(s.server.pid(), s.bundlePort) {
		return fmt.Sprintf("not listening on the bundle endpoint port %d yet", s.bundlePort)
	}
	if _, err := os.Stat(s.SocketPath); err != nil {
		return err.Error()
	}
	return ""
}

// freshDataAndSocketDir empties dir/data (a SPIRE process's state) and makes
// a short temporary directory (prefix*) for its unix socket: socket paths are
// limited to 108 bytes, which test directories exceed easily.
func freshDataAndSocketDir(dir, prefix string) (string, error) {
	if err := os.RemoveAll(filepath.Join(dir, "data")); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		return "", err
	}
	return os.MkdirTemp("", prefix)
}
