package harness

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAccSharedEtcdKeepsClustersApart: with SharedEtcd the clusters run on
// one etcd process, each apiserver under its own prefix, and an object
// created in one is absent from the other; Stop stops the etcd too.
func TestAccSharedEtcdKeepsClustersApart(t *testing.T) {
	lab := startLab(t, Options{Names: []string{"east", "west"}, SkipCRDs: true, SharedEtcd: true})
	ctx := context.Background()
	east, west := lab.Cluster("east"), lab.Cluster("west")
	if east.EtcdPID == 0 || east.EtcdPID != west.EtcdPID || east.EtcdURL != west.EtcdURL {
		t.Fatalf("etcd not shared: east pid %d %s, west pid %d %s", east.EtcdPID, east.EtcdURL, west.EtcdPID, west.EtcdURL)
	}
	t.Logf("etcd pid %d RSS %d MiB; kube-apiserver RSS east %d MiB, west %d MiB", east.EtcdPID, procRSS(east.EtcdPID)>>20,
		procRSS(east.APIServerPID)>>20, procRSS(west.APIServerPID)>>20)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "only-in-east", Namespace: "default"}}
	if _, err := clientset(t, east).CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap in east: %v", err)
	}
	if _, err := clientset(t, west).CoreV1().ConfigMaps("default").Get(ctx, cm.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get ConfigMap in west: want NotFound, got %v", err)
	}
	pids := []int{east.EtcdPID, east.APIServerPID, west.APIServerPID}
	if err := lab.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	for _, pid := range pids {
		if procAlive(pid) {
			t.Errorf("pid %d (%v) still running after Stop", pid, procArgs(pid))
		}
	}
}
