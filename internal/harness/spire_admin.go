package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// The SPIRE server admin CLI, as tests and the demo ask it: bundles,
// federation relationships, CA rotation.

// CLI runs the spire-server admin CLI against this server's socket, e.g.
// CLI(ctx, "bundle", "list"). A non-zero exit is an error quoting stderr.
func (s *Spire) CLI(ctx context.Context, args ...string) ([]byte, error) {
	return spireCLI(ctx, s.bin, s.SocketPath, s.TrustDomain, args...)
}

func spireCLI(ctx context.Context, bin, socket, trustDomain string, args ...string) ([]byte, error) {
	args = withSocketPath(socket)(args)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = childEnv()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("spire %s: spire-server %s: %v: %s", trustDomain, strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()+"\n"+stdout.String()))
	}
	return stdout.Bytes(), nil
}

// BundleShow returns `spire-server bundle show -format <format>` (spiffe or pem).
func (s *Spire) BundleShow(ctx context.Context, format string) ([]byte, error) {
	return s.CLI(ctx, "bundle", "show", "-format", format)
}

// FederatedTrustDomains lists the trust domains whose bundles this server
// holds (`spire-server bundle list`), sorted.
func (s *Spire) FederatedTrustDomains(ctx context.Context) ([]string, error) {
	return federatedTrustDomains(ctx, s.bin, s.SocketPath, s.TrustDomain)
}

func federatedTrustDomains(ctx context.Context, bin, socket, trustDomain string) ([]string, error) {
	out, err := spireCLI(ctx, bin, socket, trustDomain, "bundle", "list", "-output", "json")
	if err != nil {
		return nil, err
	}
	var list struct {
		Bundles []struct {
			TrustDomain string `json:"trust_domain"`
		} `json:"bundles"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("spire %s: bundle list: %w in %q", trustDomain, err, out)
	}
	tds := make([]string, 0, len(list.Bundles))
	for _, b := range list.Bundles {
		tds = append(tds, b.TrustDomain)
	}
	sort.Strings(tds)
	return tds, nil
}

// RotateX509CA prepares a new X.509 CA (which adds it to the bundle) and
// activates it, as an operator rotating the local authority would
// (`spire-server localauthority x509 prepare` and `activate`).
func (s *Spire) RotateX509CA(ctx context.Context) error {
	out, err := s.CLI(ctx, "localauthority", "x509", "prepare", "-output", "json")
	if err != nil {
		return err
	}
	var prepared struct {
		PreparedAuthority struct {
			AuthorityID string `json:"authority_id"`
		} `json:"prepared_authority"`
	}
	if err := json.Unmarshal(out, &prepared); err != nil || prepared.PreparedAuthority.AuthorityID == "" {
		return fmt.Errorf("spire %s: localauthority x509 prepare printed no authority ID (%v): %q", s.TrustDomain, err, out)
	}
	_, err = s.CLI(ctx, "localauthority", "x509", "activate", "-authorityID", prepared.PreparedAuthority.AuthorityID, "-output", "json")
	return err
}

// Rebuild starts the SPIRE server again from an empty datastore and without
// its keys, as a cluster rebuilt from scratch would: same trust domain,
// configuration and ports, a new X.509 CA, no federated bundles and no
// registration entries (spire-controller-manager, which keeps running,
// recreates the relationships and entries its objects declare). Agents
// attested to the old server cannot reach the new one.
func (s *Spire) Rebuild(ctx context.Context) error {
	if err := s.StopServer(); err != nil {
		return err
	}
	dataDir := filepath.Join(s.Dir, "data")
	if err := os.RemoveAll(dataDir); err != nil {
		return fmt.Errorf("spire %s: rebuilding: %w", s.TrustDomain, err)
	}
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return fmt.Errorf("spire %s: rebuilding: %w", s.TrustDomain, err)
	}
	return s.StartServer(ctx)
}
