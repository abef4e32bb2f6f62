// Package podattest is the contract between the test harness and
// internal/testkit/cmd/ztpodattestor, the SPIRE workload attestor plugin that stands
// in for the kubelet: the JSON file in which the harness records which
// processes run in which pod, and the selector values the plugin derives from
// a record. It is its own package so the plugin binary does not link the
// harness (and with it client-go).
package podattest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// Record is what the kubelet (its pod list) and the process's cgroups (its
// container) would tell SPIRE's k8s workload attestor about one process.
type Record struct {
	Namespace      string            `json:"namespace"`
	PodName        string            `json:"pod_name"`
	PodUID         string            `json:"pod_uid"`
	ServiceAccount string            `json:"service_account"`
	NodeName       string            `json:"node_name"`
	Labels         map[string]string `json:"labels,omitempty"`
	ContainerName  string            `json:"container_name,omitempty"`
	ContainerImage string            `json:"container_image,omitempty"`
}

// SelectorValues are the values SPIRE's k8s workload attestor (v1.15.3,
// pkg/agent/plugin/workloadattestor/k8s: getSelectorValuesFromPodInfo and
// getSelectorValuesFromWorkloadContainerStatus) reports for the process of a
// pod with one running container, sorted so that answers compare. The agent
// prefixes each with the plugin's name ("k8s:ns:apps").
func SelectorValues(r Record) []string {
	values := []string{
		"sa:" + r.ServiceAccount,
		"ns:" + r.Namespace,
		"node-name:" + r.NodeName,
		"pod-uid:" + r.PodUID,
		"pod-name:" + r.PodName,
		"pod-init-image-count:0",
	}
	if r.ContainerName == "" {
		values = append(values, "pod-image-count:0")
	} else {
		values = append(values, "pod-image-count:1", "container-name:"+r.ContainerName)
		if r.ContainerImage != "" {
			values = append(values, "pod-image:"+r.ContainerImage, "container-image:"+r.ContainerImage)
		}
	}
	for k, v := range r.Labels {
		values = append(values, fmt.Sprintf("pod-label:%s:%s", k, v))
	}
	sort.Strings(values)
	return values
}

// ReadFile reads a file of records by PID. A missing file holds no records:
// the plugin may be asked before the harness registered any process.
func ReadFile(path string) (map[int]Record, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[int]Record{}, nil
	}
	if err != nil {
		return nil, err
	}
	// JSON object keys are strings.
	var byText map[string]Record
	if err := json.Unmarshal(data, &byText); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	records := make(map[int]Record, len(byText))
	for k, r := range byText {
		pid, err := strconv.Atoi(k)
		if err != nil {
			return nil, fmt.Errorf("%s: key %q is not a PID", path, k)
		}
		records[pid] = r
	}
	return records, nil
}

// WriteFile replaces the file with records, whole: it writes another file
// and renames it, so the plugin never reads half a file.
func WriteFile(path string, records map[int]Record) error {
	byText := make(map[string]Record, len(records))
	for pid, r := range records {
		byText[strconv.Itoa(pid)] = r
	}
	data, err := json.MarshalIndent(byText, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
