package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// benchUser is the user the benchmark's kubeconfigs authenticate as; the
// apiserver's own loopback requests (system:apiserver) are not counted.
const benchUser = "admin"

// auditReader counts, from each cluster's audit log, the requests made since
// the last mark.
type auditReader struct {
	paths   []string
	offsets []int64
}

func newAuditReader(clusters []*harness.Cluster) *auditReader {
	a := &auditReader{}
	for _, c := range clusters {
		a.paths = append(a.paths, c.AuditLogPath())
	}
	a.offsets = make([]int64, len(a.paths))
	return a
}

func (a *auditReader) mark() {
	for i, p := range a.paths {
		if st, err := os.Stat(p); err == nil {
			a.offsets[i] = st.Size()
		}
	}
}

type auditEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource string `json:"resource"`
		APIGroup string `json:"apiGroup"`
	} `json:"objectRef"`
}

// collect returns request counts since the last mark, keyed "<verb> <what>"
// where what is cftd (ClusterFederatedTrustDomain), crd, or the resource;
// requests without an object (discovery, /openapi, /version) count under
// "discovery".
func (a *auditReader) collect() (map[string]int, error) {
	counts := map[string]int{}
	err := a.scan(func(_ int, line []byte) {
		var ev auditEvent
		if json.Unmarshal(line, &ev) != nil || ev.Stage != "ResponseComplete" || ev.User.Username != benchUser {
			return
		}
		counts[classify(ev)]++
	})
	return counts, err
}

// scan calls fn with each audit event line written since the last mark and
// the index of its log (cluster) in a.paths.
func (a *auditReader) scan(fn func(i int, line []byte)) error {
	for i, p := range a.paths {
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		if _, err := f.Seek(a.offsets[i], io.SeekStart); err != nil {
			f.Close()
			return err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			fn(i, sc.Bytes())
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return fmt.Errorf("audit log %s: %w", p, err)
		}
	}
	return nil
}

func classify(ev auditEvent) string {
	if ev.ObjectRef == nil || ev.ObjectRef.Resource == "" {
		return "discovery"
	}
	switch ev.ObjectRef.Resource {
	case "clusterfederatedtrustdomains":
		return ev.Verb + " cftd"
	case "customresourcedefinitions":
		return ev.Verb + " crd"
	}
	return ev.Verb + " " + strings.TrimSpace(ev.ObjectRef.Resource)
}
