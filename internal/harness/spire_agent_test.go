package harness

import (
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
