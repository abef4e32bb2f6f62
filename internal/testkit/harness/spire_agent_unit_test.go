package harness

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestSpireAgentConfig(t *testing.T) {
	a := &SpireAgent{
		Server: &Spire{TrustDomain: "east.zt.test", apiPort: 8081}, SocketPath: "/tmp/zta-1/agent.sock",
		Dir: "/lab/east/spire-ns/agent-node", healthPort: 9090,
	}
	conf := a.config()
	for _, want := range []string{
		`server_address = "127.0.0.1"`, "server_port = 8081", `socket_path = "/tmp/zta-1/agent.sock"`,
		`trust_domain = "east.zt.test"`, `trust_bundle_path = "/lab/east/spire-ns/agent-node/bundle.crt"`,
		`join_token_file = "/lab/east/spire-ns/agent-node/join-token"`, `NodeAttestor "join_token"`,
		`KeyManager "memory"`, `WorkloadAttestor "unix"`, "discover_workload_path = true", `bind_port = "9090"`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("agent config lacks %s:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "insecure_bootstrap") {
		t.Errorf("agent config bootstraps insecurely:\n%s", conf)
	}
}

func TestValidSegment(t *testing.T) {
	for name, want := range map[string]bool{"node": true, "app-1.b_c": true, "": false, ".": false, "..": false, "a/b": false, "a b": false} {
		if got := validSegment(name); got != want {
			t.Errorf("validSegment(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestEntryResult(t *testing.T) {
	id, err := entryResult([]byte(`{"results":[{"status":{"code":0,"message":"OK"},"entry":{"id":"abc"}}]}`))
	if err != nil || id != "abc" {
		t.Fatalf("entryResult = %q, %v", id, err)
	}
	_, err = entryResult([]byte(`{"results":[{"status":{"code":3,"message":"unable to find federated bundle"},"entry":{}}]}`))
	if err == nil || !strings.Contains(err.Error(), "unable to find federated bundle") {
		t.Fatalf("entryResult of a refusal: %v", err)
	}
	if _, err := entryResult([]byte(`not json`)); err == nil {
		t.Fatal("entryResult of garbage succeeded")
	}
}

func TestTrustDomainIDs(t *testing.T) {
	got, err := trustDomainIDs([]string{"west.zt.test", "spiffe://north.zt.test"})
	if err != nil || strings.Join(got, ",") != "spiffe://west.zt.test,spiffe://north.zt.test" {
		t.Fatalf("trustDomainIDs = %v, %v", got, err)
	}
	if _, err := trustDomainIDs([]string{"Not A Domain"}); err == nil {
		t.Fatal("trustDomainIDs accepted an invalid trust domain")
	}
}

func TestSpireAgentConfigK8sPSAT(t *testing.T) {
	a := &SpireAgent{
		Server:     &Spire{TrustDomain: "east.zt.test", apiPort: 8081, Cluster: &Cluster{Name: "east"}},
		SocketPath: "/tmp/zta-1/agent.sock", Dir: "/lab/east/spire-ns/agent-node", healthPort: 9090, psat: true,
		podAttestor: "/cache/ztpodattestor", podsFile: "/lab/east/spire-ns/agent-node/pods.json",
	}
	conf := a.config()
	for _, want := range []string{
		`NodeAttestor "k8s_psat"`, `cluster = "east"`, `token_path = "/lab/east/spire-ns/agent-node/psat-token"`,
		`WorkloadAttestor "k8s"`, `plugin_cmd = "/cache/ztpodattestor"`, `pods_file = "/lab/east/spire-ns/agent-node/pods.json"`,
		`WorkloadAttestor "unix"`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("k8s_psat agent config lacks %s:\n%s", want, conf)
		}
	}
	for _, unwanted := range []string{"join_token"} {
		if strings.Contains(conf, unwanted) {
			t.Errorf("k8s_psat agent config has %s:\n%s", unwanted, conf)
		}
	}
}

func TestSpireServerConfigNodeAttestors(t *testing.T) {
	s := &Spire{
		TrustDomain: "east.zt.test", Namespace: "spire-ns", BundleConfigMap: "spire-bundle", Dir: "/lab/east/spire-ns",
		Cluster: &Cluster{Name: "east", Kubeconfig: "/lab/east/kubeconfig"},
	}
	conf := s.serverConfig()
	for _, want := range []string{
		`NodeAttestor "join_token"`, `NodeAttestor "k8s_psat"`, `"east" = {`,
		`service_account_allow_list = ["spire-ns:spire-agent"]`, `kube_config_file = "/lab/east/kubeconfig"`,
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("server config lacks %s:\n%s", want, conf)
		}
	}
	s = &Spire{TrustDomain: "solo.zt.test", Dir: "/tmp/solo", opts: SpireOptions{Standalone: true}}
	if conf := s.serverConfig(); strings.Contains(conf, "k8s_psat") || !strings.Contains(conf, `NodeAttestor "join_token"`) {
		t.Errorf("standalone server config: want join_token only:\n%s", conf)
	}
}

func TestControllerManagerConfigReconcilesClusterSPIFFEIDs(t *testing.T) {
	s := &Spire{TrustDomain: "east.zt.test", ClassName: "c", SocketPath: "/tmp/s.sock", Cluster: &Cluster{Name: "east"}}
	var cfg struct {
		Reconcile     map[string]bool `json:"reconcile"`
		EntryIDPrefix string          `json:"entryIDPrefix"`
	}
	if err := json.Unmarshal([]byte(s.controllerManagerConfig("127.0.0.1:1")), &cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"clusterFederatedTrustDomains": true, "clusterSPIFFEIDs": true}
	if !reflect.DeepEqual(cfg.Reconcile, want) || cfg.EntryIDPrefix != ControllerManagerEntryIDPrefix {
		t.Errorf("reconcile %v, entryIDPrefix %q; want %v and %q", cfg.Reconcile, cfg.EntryIDPrefix, want, ControllerManagerEntryIDPrefix)
	}
}
