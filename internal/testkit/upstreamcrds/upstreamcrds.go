// Package upstreamcrds finds the operators' published CRDs that the tests and
// the demo install, pinned in pins.tsv (project, commit, path, sha256), so a
// clone needs nothing beside it: each file is taken from the first source
// that has it, in this order,
//
//  1. the directory $ZT_UPSTREAM_CRDS names;
//  2. the tool cache (<cache>/upstream-crds, where earlier downloads land);
//  3. ../shared/upstream-crds beside the clone (machines without internet);
//  4. a download from its project at the pinned commit
//     ($ZT_UPSTREAM_CRDS_BASE_URL/<project>/<commit>/<path>, by default from
//     raw.githubusercontent.com), stored in the tool cache.
//
// Every file, from any source, must match its sha256; a mismatch is refused
// with the file's name and source, never skipped over, because a CRD that is
// not the released one would make every test prove the wrong contract. It
// uses only the standard library, so the small command that fetches ahead of
// the builds compiles quickly.
package upstreamcrds

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DefaultBaseURL serves every project's files at <project>/<commit>/<path>.
const DefaultBaseURL = "https://raw.githubusercontent.com"

// The environment variables Sources reads.
const (
	EnvDir     = "ZT_UPSTREAM_CRDS"
	EnvBaseURL = "ZT_UPSTREAM_CRDS_BASE_URL"
)

//go:embed pins.tsv
var pinsTSV []byte

// Pin is one published CRD file: where it comes from and what it must hash to.
type Pin struct {
	File    string // the name it is kept under (and looked up by) locally
	Project string // owner/name on GitHub
	Commit  string
	Path    string // inside the project
	SHA256  string // lower-case hex
}

// URL is where the file is downloaded from, under base.
func (p Pin) URL(base string) string {
	return strings.TrimRight(base, "/") + "/" + p.Project + "/" + p.Commit + "/" + p.Path
}

// cacheName keys a cached copy by its sum, so a changed pin never meets the
// old file.
func (p Pin) cacheName() string { return p.SHA256[:12] + "-" + p.File }

// Pins returns the pinned files in the order they are installed (by file name).
func Pins() ([]Pin, error) { return parsePins(pinsTSV) }

func parsePins(data []byte) ([]Pin, error) {
	var pins []Pin
	sc := bufio.NewScanner(bytes.NewReader(data))
	header := true
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if header {
			header = false
			if strings.Join(f, ",") != "file,project,commit,path,sha256" {
				return nil, fmt.Errorf("upstreamcrds: pins.tsv line %d: header %q, want file, project, commit, path, sha256", n, line)
			}
			continue
		}
		if len(f) != 5 || len(f[4]) != 64 {
			return nil, fmt.Errorf("upstreamcrds: pins.tsv line %d: want 5 tab-separated fields ending in a sha256, got %q", n, line)
		}
		pins = append(pins, Pin{File: f[0], Project: f[1], Commit: f[2], Path: f[3], SHA256: strings.ToLower(f[4])})
	}
	if len(pins) == 0 {
		return nil, errors.New("upstreamcrds: pins.tsv pins no file")
	}
	return pins, sc.Err()
}

// Sources are the places Fetch looks, in its order. An empty directory is
// a source that is not there; an empty BaseURL is DefaultBaseURL.
type Sources struct {
	EnvDir    string // $ZT_UPSTREAM_CRDS
	CacheDir  string // the tool cache's upstream-crds directory; downloads land here
	SharedDir string // ../shared/upstream-crds beside the clone
	BaseURL   string // the download's base; DefaultBaseURL when empty
	// Client makes the downloads; a client with a 30 s timeout when nil.
	Client *http.Client
}

// DefaultSources reads the environment: the cache lies in cacheRoot (the
// tool cache's root) and the shared directory beside repoRoot.
func DefaultSources(cacheRoot, repoRoot string) Sources {
	return Sources{
		EnvDir:    os.Getenv(EnvDir),
		CacheDir:  filepath.Join(cacheRoot, "upstream-crds"),
		SharedDir: filepath.Join(filepath.Dir(repoRoot), "shared", "upstream-crds"),
		BaseURL:   os.Getenv(EnvBaseURL),
	}
}

// MismatchError is a file whose content is not the pinned one.
type MismatchError struct {
	Pin    Pin
	Source string // the file or URL it came from
	Got    string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("upstreamcrds: %s from %s has sha256 %s, but %s at %s pins %s: refusing it "+
		"(a CRD that is not the released one would make every test prove the wrong contract; "+
		"remove the file, or fix the pin in internal/testkit/upstreamcrds/pins.tsv if the project's file really changed)",
		e.Pin.File, e.Source, e.Got, e.Pin.Project, e.Pin.Commit, e.Pin.SHA256)
}

// Fetch returns the content of every pin, in order, each from the first
// source that holds it. A download is stored in the cache for the next run.
// A mismatch anywhere is returned at once; when some file is found nowhere,
// one error names every URL tried, the variable and the directories.
func Fetch(ctx context.Context, pins []Pin, src Sources) ([][]byte, error) {
	docs := make([][]byte, len(pins))
	var missing []Pin
	var downloadErrs []string
	for i, p := range pins {
		data, err := local(p, src)
		if err != nil {
			return nil, err
		}
		if data == nil {
			data, err = download(ctx, p, src)
			var mm *MismatchError
			if errors.As(err, &mm) {
				return nil, err
			}
			if err != nil {
				missing = append(missing, p)
				downloadErrs = append(downloadErrs, err.Error())
				continue
			}
		}
		docs[i] = data
	}
	if len(missing) > 0 {
		return nil, notFound(missing, downloadErrs, src)
	}
	return docs, nil
}

// local reads p from the first local source that has it (nil when none).
func local(p Pin, src Sources) ([]byte, error) {
	for _, name := range []string{
		joinIf(src.EnvDir, p.File),
		joinIf(src.CacheDir, p.cacheName()),
		joinIf(src.SharedDir, p.File),
	} {
		if name == "" {
			continue
		}
		data, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("upstreamcrds: reading %s: %w", name, err)
		}
		if err := verify(p, name, data); err != nil {
			return nil, err
		}
		return data, nil
	}
	return nil, nil
}

func joinIf(dir, name string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, name)
}

func verify(p Pin, source string, data []byte) error {
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != p.SHA256 {
		return &MismatchError{Pin: p, Source: source, Got: got}
	}
	return nil
}

// maxCRDBytes bounds a download: the largest pinned CRD is well under 2 MiB.
const maxCRDBytes = 16 << 20

func download(ctx context.Context, p Pin, src Sources) ([]byte, error) {
	base := src.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	url := p.URL(base)
	client := src.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %s", url, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxCRDBytes))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	if err := verify(p, url, data); err != nil {
		return nil, err
	}
	if src.CacheDir != "" {
		if err := store(src.CacheDir, p.cacheName(), data); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// store writes the verified file under a temporary name and renames it, so a
// concurrent reader never sees half of it.
func store(dir, name string, data []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("upstreamcrds: creating the cache: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("upstreamcrds: caching %s: %w", name, err)
	}
	_, werr := tmp.Write(data)
	// CreateTemp makes the file private; a cached CRD is public data that
	// every account's runs on the machine may share.
	merr := tmp.Chmod(0o644)
	cerr := tmp.Close()
	if err := errors.Join(werr, merr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("upstreamcrds: caching %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("upstreamcrds: caching %s: %w", name, err)
	}
	return nil
}

func notFound(missing []Pin, downloadErrs []string, src Sources) error {
	var b strings.Builder
	fmt.Fprintf(&b, "upstreamcrds: %d of the operators' published CRDs were found nowhere. Looked in, in order:\n", len(missing))
	fmt.Fprintf(&b, "  1. $%s: %s\n", EnvDir, orUnset(src.EnvDir))
	fmt.Fprintf(&b, "  2. the tool cache: %s\n", orUnset(src.CacheDir))
	fmt.Fprintf(&b, "  3. the directory beside the clone: %s\n", orUnset(src.SharedDir))
	fmt.Fprintf(&b, "  4. the download (base $%s):\n", EnvBaseURL)
	for _, e := range downloadErrs {
		fmt.Fprintf(&b, "     %s\n", e)
	}
	fmt.Fprintf(&b, "Put the files (their names: ")
	for i, p := range missing {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.File)
	}
	fmt.Fprintf(&b, ") in a directory and set $%s to it, or let this machine reach the URLs above, "+
		"or set $%s to a server that holds <project>/<commit>/<path>.", EnvDir, EnvBaseURL)
	return errors.New(b.String())
}

func orUnset(s string) string {
	if s == "" {
		return "(not set)"
	}
	return s
}
