package harness

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// The lab's object storage: internal/testkit/cmd/zts3, an S3-compatible
// server (gofakes3) on 127.0.0.1 serving HTTPS with a certificate of its own
// test CA, that SPIRE's BundlePublisher "aws_s3" writes to and peers' SPIRE
// servers read from with the https_web profile.

const (
	// S3Region is the region the lab's publishers name; the server ignores
	// it, the AWS SDK needs one.
	S3Region = "us-east-1"
	// S3AccessKeyID and S3SecretAccessKey sign the publishers' requests;
	// the server checks no signature.
	S3AccessKeyID     = "zerotrust-lab"
	S3SecretAccessKey = "zerotrust-lab-secret"
	// DefaultS3Bucket is the bucket StartS3 creates when S3Options names none.
	DefaultS3Bucket = "spire-bundles"

	s3ReadyTimeout = 30 * time.Second
	s3StopGrace    = 3 * time.Second
)

// S3Options configures StartS3.
type S3Options struct {
	// Dir holds the certificate, the objects and the log. Default: a
	// temporary directory that Stop removes.
	Dir string
	// Buckets are created at start; default {DefaultS3Bucket}.
	Buckets []string
}

// S3 is a running zts3 server. Objects are readable without credentials at
// ObjectURL (path style: Endpoint/BUCKET/KEY) and survive StopServer and
// StartServer, which play a bucket outage.
type S3 struct {
	// Endpoint is https://127.0.0.1:PORT, what a publisher's `endpoint` is.
	Endpoint string
	// CACertPEM is the CA of the server's certificate, in CACertFile too:
	// what a reader must trust (SSL_CERT_FILE for SPIRE).
	CACertPEM  []byte
	CACertFile string
	Buckets    []string
	Dir        string

	mu        sync.Mutex
	bin       string
	args      []string
	port      int
	server    *proc
	removeDir bool
	stopOnce  sync.Once
	stopErr   error
}

// StartS3 builds and starts zts3 and waits until it answers over TLS.
func StartS3(ctx context.Context, opts S3Options) (*S3, error) {
	s := &S3{Dir: opts.Dir, Buckets: opts.Buckets}
	if len(s.Buckets) == 0 {
		s.Buckets = []string{DefaultS3Bucket}
	}
	ok := false
	defer func() {
		if !ok {
			_ = s.Stop()
		}
	}()
	if s.Dir == "" {
		d, err := os.MkdirTemp("", "zt-s3-")
		if err != nil {
			return nil, err
		}
		s.Dir, s.removeDir = d, true
	} else if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, err
	}
	ca, err := newTestCA("zerotrust-harness-s3-ca")
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := ca.issueServing("zts3")
	if err != nil {
		return nil, err
	}
	s.CACertPEM, s.CACertFile = ca.certPEM, filepath.Join(s.Dir, "ca.crt")
	for name, data := range map[string][]byte{"ca.crt": ca.certPEM, "tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(s.Dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	if s.bin, err = zts3Binary(ctx); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		s.port = ports[0]
		s.Endpoint = "https://127.0.0.1:" + strconv.Itoa(s.port)
		s.args = []string{"-listen", "127.0.0.1:" + strconv.Itoa(s.port),
			"-cert", filepath.Join(s.Dir, "tls.crt"), "-key", filepath.Join(s.Dir, "tls.key"),
			"-db", filepath.Join(s.Dir, "objects.bolt")}
		for _, b := range s.Buckets {
			s.args = append(s.args, "-bucket", b)
		}
		err = s.start(ctx)
		if err == nil {
			break
		}
		_ = s.server.stop(0)
		if !errors.Is(err, errAddrInUse) || attempt == startAttempts || ctx.Err() != nil {
			return nil, err
		}
	}
	ok = true
	return s, nil
}

// ObjectURL is where the object key of bucket is read: path style, as
// SPIRE's aws_s3 publisher writes it with a custom endpoint.
func (s *S3) ObjectURL(bucket, key string) string { return s.Endpoint + "/" + bucket + "/" + key }

// LogPath is the server's log: every request with its status.
func (s *S3) LogPath() string { return filepath.Join(s.Dir, "zts3.log") }

// Get reads url (an ObjectURL) as a reader without credentials does,
// trusting only CACertPEM; it fails unless the answer is 200.
func (s *S3) Get(ctx context.Context, url string) ([]byte, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CACertPEM)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, DisableKeepAlives: true,
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(body))
	}
	return body, nil
}

// StopServer stops the server: every request fails (connection refused)
// until StartServer. The objects stay on disk.
func (s *S3) StopServer() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.server.stop(s3StopGrace)
}

// StartServer starts the server again on the same port with the same
// objects, and waits until it answers.
func (s *S3) StartServer(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server != nil && !s.server.exited() {
		return fmt.Errorf("zts3 (pid %d) is already running", s.server.pid())
	}
	var err error
	for attempt := 1; attempt <= 5; attempt++ {
		if err = s.start(ctx); err == nil || !errors.Is(err, errAddrInUse) || ctx.Err() != nil {
			break
		}
		_ = s.server.stop(0)
		time.Sleep(500 * time.Millisecond)
	}
	return err
}

// Stop stops the server and removes a temporary Dir.
func (s *S3) Stop() error {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.stopErr = s.server.stop(s3StopGrace)
		if s.stopErr == nil && s.removeDir {
			_ = os.RemoveAll(s.Dir)
		}
	})
	return s.stopErr
}

func (s *S3) start(ctx context.Context) error {
	var err error
	if s.server, err = startProc("zts3", s.bin, s.args, s.LogPath(), false); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s3ReadyTimeout)
	defer cancel()
	probe := s.ObjectURL(s.Buckets[0], "")
	for {
		if s.server.exited() {
			return s.server.exitError()
		}
		// A bucket listing answers 200 once the server serves.
		_, err := s.Get(ctx, probe)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("zts3 (pid %d) did not answer within %v (last: %v); last lines of %s:\n%s",
				s.server.pid(), s3ReadyTimeout, err, s.LogPath(), fileTail(s.LogPath(), 25))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

var zts3Build struct {
	sync.Mutex
	path string
}

// zts3Binary builds internal/testkit/cmd/zts3 once per process into the
// harness's binary cache (see podAttestorBinary).
func zts3Binary(ctx context.Context) (string, error) {
	zts3Build.Lock()
	defer zts3Build.Unlock()
	if zts3Build.path != "" {
		return zts3Build.path, nil
	}
	dst, err := buildHarnessCommand(ctx, "zts3")
	if err != nil {
		return "", err
	}
	zts3Build.path = dst
	return dst, nil
}

// buildHarnessCommand builds internal/testkit/cmd/<name> into
// <cache>/harness-bin/<hash of the clone's path>/<name> (see
// podAttestorBinary) and returns the binary's path.
func buildHarnessCommand(ctx context.Context, name string) (string, error) {
	dir, root, env, err := harnessBinDir()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(dir, name)
	// Built under another name and renamed: a process of another test
	// starting the binary meanwhile never runs half of it.
	tmp := fmt.Sprintf("%s.%d.tmp", dst, os.Getpid())
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, "./internal/testkit/cmd/"+name)
	cmd.Dir = root
	cmd.Env = env
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("go build ./internal/testkit/cmd/%s: %v: %s", name, err, tailLines(stderr.String(), 20))
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return dst, nil
}
