package kube_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/trustbundle"
)

// TestAccExecThroughAPIServer runs commands in the SPIRE server Pod of a real
// local cluster: the API server forwards them to the harness exec endpoint,
// which runs the real spire-server binary.
func TestAccExecThroughAPIServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lab := acctest.LabFor(t, "exec", harness.Options{Names: []string{"exec"}})
	spire, err := harness.StartSpire(ctx, lab.Clusters[0], harness.SpireOptions{TrustDomain: "exec.zt.test"})
	if err != nil {
		t.Fatalf("starting SPIRE: %v", err)
	}
	t.Cleanup(func() { _ = spire.Stop() })
	client, err := kube.NewClient("exec", lab.Clusters[0].RESTConfig(), "zerotrust-test")
	if err != nil {
		t.Fatal(err)
	}

	stdout, stderr, err := client.Exec(ctx, spire.Namespace, spire.PodName, spire.Container,
		[]string{"spire-server", "bundle", "show", "-format", "spiffe"})
	if err != nil {
		t.Fatalf("Exec bundle show: %v (stderr %q)", err, stderr)
	}
	b, err := trustbundle.Parse(spiffeid.RequireTrustDomainFromString(spire.TrustDomain), stdout)
	if err != nil {
		t.Fatalf("Exec stdout is not the bundle: %v\n%s", err, stdout)
	}
	shown, err := spire.BundleShow(ctx, "pem")
	if err != nil {
		t.Fatal(err)
	}
	if trustbundle.X509AuthoritiesPEM(b) != string(shown) {
		t.Fatalf("bundle through Exec differs from `bundle show -format pem`:\n%s\nwant\n%s", trustbundle.X509AuthoritiesPEM(b), shown)
	}

	// A non-zero exit: the code and stderr come back, as *ExitError.
	_, stderr, err = client.Exec(ctx, spire.Namespace, spire.PodName, spire.Container,
		[]string{"spire-server", "bundle", "list", "-id", "spiffe://nobody.zt.test"})
	var exit *kube.ExitError
	if !errors.As(err, &exit) || exit.Code == 0 || !strings.Contains(exit.Stderr, "bundle not found") || len(stderr) == 0 {
		t.Fatalf("Exec of a failing command: err %v, stderr %q; want *ExitError with a non-zero code and stderr", err, stderr)
	}
	if !strings.Contains(err.Error(), "pods/exec") {
		t.Errorf("Exec error %q does not name pods/exec", err)
	}

	// Missing container and pod: clear errors before any stream is opened.
	_, _, err = client.Exec(ctx, spire.Namespace, spire.PodName, "sidecar", []string{"true"})
	if !errors.Is(err, kube.ErrContainerNotFound) || !strings.Contains(err.Error(), "spire-server") {
		t.Fatalf("Exec in a missing container: %v; want ErrContainerNotFound listing the containers", err)
	}
	_, _, err = client.Exec(ctx, spire.Namespace, "no-such-pod", spire.Container, []string{"true"})
	if !kube.IsNotFound(err) {
		t.Fatalf("Exec in a missing pod: %v; want a not-found error", err)
	}
}

func TestExitErrorMessage(t *testing.T) {
	if got := (&kube.ExitError{Code: 2}).Error(); got != "command exited with code 2" {
		t.Errorf("ExitError without stderr = %q", got)
	}
	if got := (&kube.ExitError{Code: 1, Stderr: "boom"}).Error(); got != "command exited with code 1: boom" {
		t.Errorf("ExitError with stderr = %q", got)
	}
}
