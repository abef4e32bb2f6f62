package acctest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// What terraform-plugin-testing cannot express runs the terraform CLI
// directly against the provider served from the test process: `terraform
// query -generate-config-out` (its Query steps cannot generate configuration)
// and one directory used by two CLIs in turn (state written by an old
// Terraform, read by the current one).

// providerAddress is the address ServeProvider serves under, the one
// RequiredProviders names.
const providerAddress = "registry.terraform.io/ztfabric/zerotrust"

// RequiredProviders is the terraform block for configurations run with
// ServeProvider.
const RequiredProviders = `
terraform {
  required_providers {
    zerotrust = { source = "ztfabric/zerotrust" }
  }
}
`

// ServeProvider serves the provider under test from this process in debug
// mode until the test ends, and returns the TF_REATTACH_PROVIDERS value that
// points terraform at it.
func ServeProvider(t *testing.T) string {
	t.Helper()
	server, err := ProtoV6ProviderFactories["zerotrust"]()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	configs := make(chan *goplugin.ReattachConfig, 1)
	closed := make(chan struct{})
	served := make(chan error, 1)
	go func() {
		served <- tf6server.Serve(providerAddress, func() tfprotov6.ProviderServer { return server },
			tf6server.WithDebug(ctx, configs, closed),
			tf6server.WithGoPluginLogger(hclog.NewNullLogger()),
			// SDK logs as in terraform-plugin-testing: only with TF_LOG or
			// TF_ACC_LOG_PATH, never to the test's stderr by default.
			tf6server.WithLoggingSink(t),
			tf6server.WithoutLogStderrOverride())
	}()
	var cfg *goplugin.ReattachConfig
	select {
	case cfg = <-configs:
	case err := <-served:
		cancel()
		t.Fatalf("serving the provider: %v", err)
	case <-time.After(time.Minute):
		cancel()
		t.Fatal("the provider server did not start within a minute")
	}
	t.Cleanup(func() {
		cancel()
		<-closed
	})
	reattach, err := json.Marshal(map[string]any{providerAddress: map[string]any{
		"Protocol":        string(cfg.Protocol),
		"ProtocolVersion": cfg.ProtocolVersion,
		"Pid":             cfg.Pid,
		"Test":            cfg.Test,
		"Addr":            map[string]string{"Network": cfg.Addr.Network(), "String": cfg.Addr.String()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return string(reattach)
}

// Terraform runs the CLI tool (a harness.Tool name: "terraform",
// "terraform-1.11", ...) in dir against the provider ServeProvider serves
// (reattach), and returns its output and exit code.
func Terraform(t *testing.T, tool, dir, reattach string, args ...string) (string, int) {
	t.Helper()
	tf, err := harness.Tool(tool)
	if err != nil {
		t.Fatalf("%s unavailable: %v", tool, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tf, append(args, "-no-color")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TF_REATTACH_PROVIDERS="+reattach, "TF_IN_AUTOMATION=1", "TF_INPUT=0",
		"CHECKPOINT_DISABLE=1")
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exitErr):
		return string(out), exitErr.ExitCode()
	default:
		t.Fatalf("running %s %v: %v", tool, args, err)
		return "", -1
	}
}

// MustTerraform is Terraform that fails the test unless the command succeeds.
func MustTerraform(t *testing.T, tool, dir, reattach string, args ...string) string {
	t.Helper()
	out, code := Terraform(t, tool, dir, reattach, args...)
	if code != 0 {
		t.Fatalf("%s %s exited %d:\n%s", tool, strings.Join(args, " "), code, out)
	}
	return out
}

// StateIdentity is the identity terraform.tfstate in dir holds for its one
// resource instance, nil when there is none.
func StateIdentity(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var state struct {
		Resources []struct {
			Instances []struct {
				Identity map[string]any `json:"identity"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(data, &state); err != nil {
		t.Fatal(err)
	}
	if len(state.Resources) != 1 || len(state.Resources[0].Instances) != 1 {
		t.Fatalf("terraform.tfstate holds %d resources, want one with one instance:\n%s", len(state.Resources), data)
	}
	return state.Resources[0].Instances[0].Identity
}

// QueryGenerateConfig runs what a user adopting existing objects runs:
// `terraform query -generate-config-out` on lists (list blocks) with
// provider (a provider block), then apply, which must import exactly want
// objects and change nothing, then plan, which must be empty. It returns the
// generated configuration.
func QueryGenerateConfig(t *testing.T, provider, lists string, want int) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"main.tf": RequiredProviders + provider, "lists.tfquery.hcl": lists}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	reattach := ServeProvider(t)
	MustTerraform(t, "terraform", dir, reattach, "init")
	MustTerraform(t, "terraform", dir, reattach, "query", "-generate-config-out=generated.tf")
	data, err := os.ReadFile(filepath.Join(dir, "generated.tf"))
	if err != nil {
		t.Fatal(err)
	}
	generated := string(data)
	if got := strings.Count(generated, "import {"); got != want {
		t.Fatalf("generated.tf has %d import blocks, want %d:\n%s", got, want, generated)
	}
	out := MustTerraform(t, "terraform", dir, reattach, "apply", "-auto-approve")
	if line := fmt.Sprintf("%d imported, 0 added, 0 changed, 0 destroyed", want); !strings.Contains(out, line) {
		t.Fatalf("apply of the generated configuration: want %q\n%s\ngenerated.tf:\n%s", line, out, generated)
	}
	// -detailed-exitcode: exit status 2 when the plan has changes.
	if out, code := Terraform(t, "terraform", dir, reattach, "plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan after adopting the generated configuration exited %d, want 0 (no changes):\n%s\ngenerated.tf:\n%s",
			code, out, generated)
	}
	return generated
}

// StateWithoutIdentity applies config (one resource instance; RequiredProviders
// is added) with Terraform 1.11, which stores no resource identity, then
// plans with the current CLI (nothing to change), refreshes (the identity
// becomes want) and plans again (nothing to change). The configuration is
// destroyed at the end, and gone (if given) checks the cluster afterwards.
func StateWithoutIdentity(t *testing.T, config string, want map[string]any, gone func() error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(RequiredProviders+config), 0o600); err != nil {
		t.Fatal(err)
	}
	reattach := ServeProvider(t)
	old, current := "terraform-1.11", "terraform"
	t.Cleanup(func() {
		if out, code := Terraform(t, current, dir, reattach, "destroy", "-auto-approve"); code != 0 {
			t.Errorf("cleanup: terraform destroy exited %d:\n%s", code, out)
		}
		if gone != nil {
			if err := gone(); err != nil {
				t.Error(err)
			}
		}
	})
	MustTerraform(t, old, dir, reattach, "init")
	MustTerraform(t, old, dir, reattach, "apply", "-auto-approve")
	if got := StateIdentity(t, dir); got != nil {
		t.Fatalf("identity after apply with %s: %v, want none", old, got)
	}
	MustTerraform(t, current, dir, reattach, "init")
	if out, code := Terraform(t, current, dir, reattach, "plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan with %s on state without identity exited %d, want 0:\n%s", current, code, out)
	}
	MustTerraform(t, current, dir, reattach, "apply", "-refresh-only", "-auto-approve")
	if got := StateIdentity(t, dir); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("identity after a refresh with %s: %v, want %v", current, got, want)
	}
	if out, code := Terraform(t, current, dir, reattach, "plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan after the refresh exited %d, want 0:\n%s", code, out)
	}
}
