package kube

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRESTConfigFromAttributes(t *testing.T) {
	c := Connection{Host: "https://127.0.0.1:6443", Token: "secret", TLSServerName: "api.local", Insecure: false,
		Exec: &ExecConfig{APIVersion: "client.authentication.k8s.io/v1beta1", Command: "get-token", Args: []string{"a"}, Env: map[string]string{"X": "1"}}}
	cfg, err := c.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != c.Host || cfg.BearerToken != "secret" || cfg.ServerName != "api.local" {
		t.Errorf("unexpected config: host %q token set %v sni %q", cfg.Host, cfg.BearerToken != "", cfg.ServerName)
	}
	if cfg.ExecProvider == nil || cfg.ExecProvider.Command != "get-token" || len(cfg.ExecProvider.Env) != 1 {
		t.Errorf("exec plugin not carried over: %+v", cfg.ExecProvider)
	}
}

func TestRESTConfigFromKubeconfigWithOverrides(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config")
	kubeconfig := `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true}
- name: b
  cluster: {server: "https://10.0.0.2:6443", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: from-file}
contexts:
- name: ctx-a
  context: {cluster: a, user: u}
- name: ctx-b
  context: {cluster: b, user: u}
current-context: ctx-a
`
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Connection{ConfigPaths: []string{path}, ConfigContext: "ctx-b"}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://10.0.0.2:6443" || cfg.BearerToken != "from-file" {
		t.Errorf("context not honoured: host %q", cfg.Host)
	}
	cfg, err = Connection{ConfigPaths: []string{path}, Token: "override"}.RESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://10.0.0.1:6443" || cfg.BearerToken != "override" {
		t.Errorf("attributes must override the file: host %q", cfg.Host)
	}
}

func TestRESTConfigErrors(t *testing.T) {
	if _, err := (Connection{}).RESTConfig(); !errors.Is(err, ErrNoConnection) {
		t.Errorf("empty connection: err = %v, want ErrNoConnection", err)
	}
	if _, err := (Connection{ConfigPaths: []string{"/nonexistent/kubeconfig"}}).RESTConfig(); err == nil {
		t.Error("missing kubeconfig file must be an error")
	}
}

func TestClustersRegistry(t *testing.T) {
	cs := NewClusters(Settings{FieldManager: "zerotrust", QPS: 50, Burst: 100})
	cs.Add("east", Connection{Host: "https://127.0.0.1:1"}, false)
	cs.Add("late", Connection{}, true)
	if got := cs.Keys(); len(got) != 2 || got[0] != "east" || got[1] != "late" {
		t.Errorf("Keys = %v", got)
	}
	c1, err := cs.Client("east")
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := cs.Client("east")
	if c1 != c2 {
		t.Error("clients must be built once and cached")
	}
	if c1.rest.QPS != 50 || c1.rest.Burst != 100 {
		t.Errorf("rate limits not applied: %v/%v", c1.rest.QPS, c1.rest.Burst)
	}
	if _, err := cs.Client("late"); err == nil || !cs.IsUnknown("late") {
		t.Error("an unknown connection must not build a client")
	}
	if _, err := cs.Client("north"); err == nil {
		t.Error("an unknown key must be an error")
	}
	if msg := cs.UnknownKeyError("north"); msg == "" || !strings.Contains(msg, `"east", "late"`) {
		t.Errorf("UnknownKeyError must list the keys: %s", msg)
	}
	if _, err := cs.Client(DefaultKey); err == nil {
		t.Error("no default connection configured must be an error")
	}
}
