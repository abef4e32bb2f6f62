package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/podattest"
)

// What a k8s_psat agent (SpireAgentOptions.K8sPSAT) needs in its cluster: in
// a real cluster a DaemonSet Pod on each Node, whose projected ServiceAccount
// token the kubelet writes into the container. Here the harness creates the
// objects and asks for the token itself (TokenRequest, as the kubelet does).

const (
	spireAgentImage = "ghcr.io/spiffe/spire-agent:1.15.3" // what the Pod object says it runs; nothing pulls it
	// psatAudience is the k8s_psat server attestor's default audience.
	psatAudience = "spire-server"
	// psatTokenTTL outlasts any test: the agent reads the token again only to
	// re-attest, and nothing here rotates it as a kubelet would.
	psatTokenTTL = 2 * time.Hour
)

func (a *SpireAgent) tokenPath() string { return filepath.Join(a.Dir, "psat-token") }

// preparePSAT creates the agent's ServiceAccount, Node and Pod (or takes
// those an earlier agent of this name left), writes a token bound to the Pod,
// the empty records file of the pod attestor, and sets the agent's ID, which
// the server will derive from the Node's UID.
func (a *SpireAgent) preparePSAT(ctx context.Context) error {
	s := a.Server
	cs, err := kubernetes.NewForConfig(s.Cluster.RESTConfig())
	if err != nil {
		return err
	}
	a.ServiceAccount = SpireAgentServiceAccount
	a.NodeName = a.Name + "-" + s.Namespace
	a.PodName = "spire-agent-" + a.Name

	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: a.ServiceAccount, Namespace: s.Namespace}}
	if _, err := cs.CoreV1().ServiceAccounts(s.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ServiceAccount %s/%s: %w", s.Namespace, a.ServiceAccount, err)
	}

	now := metav1.NewTime(time.Now())
	created, err := ensureNode(ctx, cs, a.NodeName, corev1.NodeStatus{
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "zerotrust harness: the node of spire-agent " + a.Name, LastHeartbeatTime: now, LastTransitionTime: now,
		}},
	})
	if err != nil {
		return err
	}
	a.NodeUID = string(created.UID)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: a.PodName, Namespace: s.Namespace,
			Labels: map[string]string{"app.kubernetes.io/name": "spire-agent"},
		},
		Spec: corev1.PodSpec{
			NodeName:           a.NodeName,
			ServiceAccountName: a.ServiceAccount,
			Containers:         []corev1.Container{{Name: "spire-agent", Image: spireAgentImage}},
		},
	}
	cur, err := createRunningPod(ctx, cs, pod, "harness://spire-agent/"+a.Name)
	if err != nil {
		return err
	}

	exp := int64(psatTokenTTL / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(s.Namespace).CreateToken(ctx, a.ServiceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			Audiences:         []string{psatAudience},
			ExpirationSeconds: &exp,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: cur.Name, UID: cur.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("requesting a token of ServiceAccount %s/%s bound to Pod %s: %w", s.Namespace, a.ServiceAccount, cur.Name, err)
	}
	if err := os.WriteFile(a.tokenPath(), []byte(tr.Status.Token), 0o600); err != nil {
		return err
	}
	a.SPIFFEID = fmt.Sprintf("spiffe://%s/spire/agent/k8s_psat/%s/%s", s.TrustDomain, s.Cluster.Name, a.NodeUID)

	if a.podAttestor, err = podAttestorBinary(ctx); err != nil {
		return err
	}
	a.podsFile = filepath.Join(a.Dir, "pods.json")
	a.pods = map[int]podattest.Record{}
	return podattest.WriteFile(a.podsFile, a.pods)
}

// createRunningPod creates pod (or takes the existing one of that name, which
// must be on the same node) and reports it running and ready, as its kubelet
// would: nothing else does here.
func createRunningPod(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, containerID string) (*corev1.Pod, error) {
	pods := cs.CoreV1().Pods(pod.Namespace)
	cur, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		cur, err = pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err == nil && cur.Spec.NodeName != pod.Spec.NodeName {
			err = fmt.Errorf("it exists on node %q, not %q", cur.Spec.NodeName, pod.Spec.NodeName)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("creating Pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	now := metav1.NewTime(time.Now())
	c := pod.Spec.Containers[0]
	cur.Status = corev1.PodStatus{
		Phase:  corev1.PodRunning,
		HostIP: "127.0.0.1", PodIP: "127.0.0.1",
		StartTime: &now,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: c.Name, Ready: true, Started: ptrTo(true), Image: c.Image, ImageID: c.Image, ContainerID: containerID,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}},
	}
	if cur, err = pods.UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err != nil {
		return nil, fmt.Errorf("updating Pod %s/%s status: %w", pod.Namespace, pod.Name, err)
	}
	return cur, nil
}

// registerPodProcess tells the agent's pod attestor that process pid runs in
// the pod r describes; release forgets it again (a PID is reused once the
// process is gone).
func (a *SpireAgent) registerPodProcess(pid int, r podattest.Record) (release func(), err error) {
	if !a.psat {
		return nil, fmt.Errorf("spire-agent %s attests no pods: start it with K8sPSAT", a.Name)
	}
	a.podsMu.Lock()
	defer a.podsMu.Unlock()
	a.pods[pid] = r
	if err := podattest.WriteFile(a.podsFile, a.pods); err != nil {
		delete(a.pods, pid)
		return nil, err
	}
	return func() {
		a.podsMu.Lock()
		defer a.podsMu.Unlock()
		delete(a.pods, pid)
		// A stale record only matters if the PID comes back as another
		// process of this test; the next write corrects the file.
		_ = podattest.WriteFile(a.podsFile, a.pods)
	}, nil
}
