package podattest

import (
	"path/filepath"
	"reflect"
	"testing"
)

func TestSelectorValues(t *testing.T) {
	r := Record{
		Namespace: "apps", PodName: "web-0", PodUID: "1f0c", ServiceAccount: "web", NodeName: "node-a",
		Labels: map[string]string{"app": "web"}, ContainerName: "app", ContainerImage: "example/web:1",
	}
	want := []string{
		"container-image:example/web:1", "container-name:app", "node-name:node-a", "ns:apps",
		"pod-image-count:1", "pod-image:example/web:1", "pod-init-image-count:0", "pod-label:app:web",
		"pod-name:web-0", "pod-uid:1f0c", "sa:web",
	}
	if got := SelectorValues(r); !reflect.DeepEqual(got, want) {
		t.Errorf("SelectorValues = %q, want %q", got, want)
	}
}

func TestFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pods.json")
	got, err := ReadFile(path)
	if err != nil || len(got) != 0 {
		t.Fatalf("missing file: %v, %v; want no records and no error", got, err)
	}
	want := map[int]Record{42: {Namespace: "apps", PodName: "web-0", PodUID: "1f0c", ServiceAccount: "web", NodeName: "n"}}
	if err := WriteFile(path, want); err != nil {
		t.Fatal(err)
	}
	if got, err = ReadFile(path); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ReadFile = %v, %v; want %v", got, err, want)
	}
	if err := WriteFile(path, map[int]Record{}); err != nil {
		t.Fatal(err)
	}
	if got, err = ReadFile(path); err != nil || len(got) != 0 {
		t.Fatalf("after removing every record: %v, %v", got, err)
	}
}
