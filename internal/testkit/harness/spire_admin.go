package harness

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/hex"
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
	id, err := s.PrepareX509Authority(ctx)
	if err != nil {
		return err
	}
	return s.ActivateX509Authority(ctx, id)
}

// PrepareX509Authority runs `localauthority x509 prepare`: SPIRE makes a new
// X.509 CA, adds it to its bundle (so peers and workloads learn it before
// anything is signed with it) and returns its authority ID.
func (s *Spire) PrepareX509Authority(ctx context.Context) (string, error) {
	out, err := s.CLI(ctx, "localauthority", "x509", "prepare", "-output", "json")
	if err != nil {
		return "", err
	}
	var prepared struct {
		PreparedAuthority struct {
			AuthorityID string `json:"authority_id"`
		} `json:"prepared_authority"`
	}
	if err := json.Unmarshal(out, &prepared); err != nil || prepared.PreparedAuthority.AuthorityID == "" {
		return "", fmt.Errorf("spire %s: localauthority x509 prepare printed no authority ID (%v): %q", s.TrustDomain, err, out)
	}
	return prepared.PreparedAuthority.AuthorityID, nil
}

// ActivateX509Authority runs `localauthority x509 activate`: the prepared
// authority id signs new SVIDs from now on; the one it replaces becomes the
// old authority, still in the bundle.
func (s *Spire) ActivateX509Authority(ctx context.Context, id string) error {
	_, err := s.CLI(ctx, "localauthority", "x509", "activate", "-authorityID", id, "-output", "json")
	return err
}

// TaintX509Authority runs `localauthority x509 taint` on the old authority
// id: agents and the server re-sign whatever it signed. It stays in the
// bundle.
func (s *Spire) TaintX509Authority(ctx context.Context, id string) error {
	_, err := s.CLI(ctx, "localauthority", "x509", "taint", "-authorityID", id, "-output", "json")
	return err
}

// RevokeX509Authority runs `localauthority x509 revoke` on the tainted old
// authority id, which removes it from the bundle.
func (s *Spire) RevokeX509Authority(ctx context.Context, id string) error {
	_, err := s.CLI(ctx, "localauthority", "x509", "revoke", "-authorityID", id, "-output", "json")
	return err
}

// X509Authority is an X.509 authority of a bundle SPIRE holds.
type X509Authority struct {
	// ID is the hex subject key ID, what `localauthority` calls the
	// authority ID.
	ID      string
	Tainted bool
}

// BundleX509Authorities lists the X.509 authorities of the bundle this
// server holds for trustDomain: its own (`bundle show`) or a federated one
// (`bundle list -id`). A federated bundle it does not hold is an error.
func (s *Spire) BundleX509Authorities(ctx context.Context, trustDomain string) ([]X509Authority, error) {
	args := []string{"bundle", "list", "-id", "spiffe://" + trustDomain, "-output", "json"}
	if trustDomain == s.TrustDomain {
		args = []string{"bundle", "show", "-output", "json"}
	}
	out, err := s.CLI(ctx, args...)
	if err != nil {
		return nil, err
	}
	var b struct {
		X509Authorities []struct {
			ASN1    []byte `json:"asn1"`
			Tainted bool   `json:"tainted"`
		} `json:"x509_authorities"`
	}
	if err := json.Unmarshal(out, &b); err != nil {
		return nil, fmt.Errorf("spire %s: bundle of %s: %w in %q", s.TrustDomain, trustDomain, err, out)
	}
	auths := make([]X509Authority, 0, len(b.X509Authorities))
	for _, a := range b.X509Authorities {
		cert, err := x509.ParseCertificate(a.ASN1)
		if err != nil {
			return nil, fmt.Errorf("spire %s: bundle of %s: %w", s.TrustDomain, trustDomain, err)
		}
		auths = append(auths, X509Authority{ID: hex.EncodeToString(cert.SubjectKeyId), Tainted: a.Tainted})
	}
	return auths, nil
}

// SetFederatedBundle replaces the bundle this server holds for the bundle's
// trust domain with bundle (SPIFFE format), as `spire-server bundle set`
// does; an operator's way out when SPIRE can no longer authenticate a peer's
// endpoint with the bundle it holds.
func (s *Spire) SetFederatedBundle(ctx context.Context, trustDomain string, bundle []byte) error {
	f, err := os.CreateTemp(s.Dir, "bundle-set-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(bundle); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	_, err = s.CLI(ctx, "bundle", "set", "-format", "spiffe", "-id", "spiffe://"+trustDomain, "-path", f.Name())
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
