package upstreamcrds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// pinFor pins content as file of a made-up project.
func pinFor(file, content string) Pin {
	sum := sha256.Sum256([]byte(content))
	return Pin{File: file, Project: "example/operator", Commit: "0123abcd", Path: "config/crd/" + file, SHA256: hex.EncodeToString(sum[:])}
}

// server serves files at <project>/<commit>/<path> on 127.0.0.1 and counts
// the requests.
func server(t *testing.T, files map[string]string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		body, ok := files[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func closedPortURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPinsAreWellFormed(t *testing.T) {
	pins, err := Pins()
	if err != nil {
		t.Fatal(err)
	}
	if len(pins) != 8 {
		t.Fatalf("pins.tsv pins %d files, want the 8 the tests install", len(pins))
	}
	for i, p := range pins {
		if len(p.Commit) != 40 || strings.Count(p.Project, "/") != 1 || !strings.HasSuffix(p.File, ".yaml") {
			t.Errorf("pin %+v: want a 40-hex commit, an owner/name project and a .yaml file", p)
		}
		if i > 0 && pins[i-1].File >= p.File {
			t.Errorf("pins.tsv: %s after %s: keep the files sorted (the order they are installed in)", p.File, pins[i-1].File)
		}
	}
	if got := pins[0].URL(DefaultBaseURL); got != "https://raw.githubusercontent.com/openshift/cert-manager-operator/"+
		"454cb8846b0c6f6653343087491c0e6d4cd7f770/config/crd/bases/operator.openshift.io_istiocsrs.yaml" {
		t.Errorf("URL = %s", got)
	}
}

func TestParsePinsRefusesBadLines(t *testing.T) {
	for _, in := range []string{
		"file\tproject\n",
		"file\tproject\tcommit\tpath\tsha256\na.yaml\tx/y\tc\tp\n",
		"file\tproject\tcommit\tpath\tsha256\na.yaml\tx/y\tc\tp\tshort\n",
		"# only a comment\n",
	} {
		if _, err := parsePins([]byte(in)); err == nil {
			t.Errorf("parsePins(%q) accepted it", in)
		}
	}
}

func TestFetchDownloadsVerifiesAndCaches(t *testing.T) {
	a, b := pinFor("a.yaml", "kind: A\n"), pinFor("b.yaml", "kind: B\n")
	srv, hits := server(t, map[string]string{
		"example/operator/0123abcd/config/crd/a.yaml": "kind: A\n",
		"example/operator/0123abcd/config/crd/b.yaml": "kind: B\n",
	})
	cache := filepath.Join(t.TempDir(), "cache")
	src := Sources{CacheDir: cache, SharedDir: filepath.Join(t.TempDir(), "absent"), BaseURL: srv.URL}
	docs, err := Fetch(context.Background(), []Pin{a, b}, src)
	if err != nil {
		t.Fatal(err)
	}
	if string(docs[0]) != "kind: A\n" || string(docs[1]) != "kind: B\n" || hits.Load() != 2 {
		t.Fatalf("docs %q after %d requests, want both files after 2", docs, hits.Load())
	}
	// The second run is served from the cache: no request at all.
	if _, err := Fetch(context.Background(), []Pin{a, b}, src); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 2 {
		t.Errorf("the second Fetch made %d more requests, want none (the cache holds both)", hits.Load()-2)
	}
	if _, err := os.Stat(filepath.Join(cache, a.cacheName())); err != nil {
		t.Errorf("the download is not in the cache: %v", err)
	}
}

func TestFetchSourceOrder(t *testing.T) {
	p := pinFor("a.yaml", "kind: A\n")
	env, shared := t.TempDir(), t.TempDir()
	srv, hits := server(t, nil) // would answer 404: never asked
	writeFile(t, env, "a.yaml", "kind: A\n")
	writeFile(t, shared, "a.yaml", "tampered\n")
	// The variable's directory comes first, so the bad shared copy is never read.
	if _, err := Fetch(context.Background(), []Pin{p}, Sources{EnvDir: env, SharedDir: shared, BaseURL: srv.URL}); err != nil {
		t.Fatalf("with the file in $%s: %v", EnvDir, err)
	}
	// Without it, the shared copy is read, and refused.
	_, err := Fetch(context.Background(), []Pin{p}, Sources{SharedDir: shared, BaseURL: srv.URL})
	var mm *MismatchError
	if !errors.As(err, &mm) || mm.Source != filepath.Join(shared, "a.yaml") {
		t.Fatalf("a tampered shared copy: got %v, want a MismatchError naming %s", err, filepath.Join(shared, "a.yaml"))
	}
	if hits.Load() != 0 {
		t.Errorf("%d downloads, want none: a local source held the file", hits.Load())
	}
}

func TestFetchRefusesADownloadThatDoesNotMatch(t *testing.T) {
	p := pinFor("a.yaml", "kind: A\n")
	srv, _ := server(t, map[string]string{"example/operator/0123abcd/config/crd/a.yaml": "kind: NotA\n"})
	cache := t.TempDir()
	_, err := Fetch(context.Background(), []Pin{p}, Sources{CacheDir: cache, BaseURL: srv.URL})
	var mm *MismatchError
	if !errors.As(err, &mm) {
		t.Fatalf("got %v, want a MismatchError", err)
	}
	for _, want := range []string{"a.yaml", srv.URL + "/example/operator/0123abcd/config/crd/a.yaml", p.SHA256, "refusing it"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not name %q:\n%v", want, err)
		}
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("a refused download was cached: %v", entries)
	}
}

func TestFetchUnreachableNamesEverySource(t *testing.T) {
	a, b := pinFor("a.yaml", "kind: A\n"), pinFor("b.yaml", "kind: B\n")
	shared := t.TempDir()
	writeFile(t, shared, "a.yaml", "kind: A\n") // b is nowhere
	base := closedPortURL(t)
	src := Sources{EnvDir: "", CacheDir: filepath.Join(t.TempDir(), "cache"), SharedDir: shared, BaseURL: base}
	_, err := Fetch(context.Background(), []Pin{a, b}, src)
	if err == nil {
		t.Fatal("Fetch succeeded with b.yaml nowhere")
	}
	msg := err.Error()
	for _, want := range []string{
		"1 of the operators' published CRDs", "$" + EnvDir + ": (not set)", src.CacheDir, shared,
		base + "/example/operator/0123abcd/config/crd/b.yaml", "connection refused", "$" + EnvBaseURL, "b.yaml",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not name %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "crd/a.yaml") {
		t.Errorf("the error names a.yaml's URL, which was found beside the clone:\n%s", msg)
	}
}
