package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
)

// podExec names the subresource exec needs in errors: RBAC grants it as
// verb "create" on resource "pods/exec".
var podExec = Kind{Version: "v1", Kind: "Pod", Plural: "pods/exec", Namespaced: true}

// coreV1 holds only the core/v1 types exec needs, so that exec does not pull
// in the typed clientset and every API group's types.
var coreV1 = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err) // registering built-in types cannot fail
	}
	return s
}()

// ErrContainerNotFound is wrapped by Exec's error when the pod has no
// container of the requested name.
var ErrContainerNotFound = errors.New("no such container")

// ExitError is a command that ran in the container and exited non-zero.
type ExitError struct {
	Code   int
	Stderr string
}

func (e *ExitError) Error() string {
	if e.Stderr == "" {
		return fmt.Sprintf("command exited with code %d", e.Code)
	}
	return fmt.Sprintf("command exited with code %d: %s", e.Code, e.Stderr)
}

// Exec runs command in a container of a pod through the API server (pod
// exec: WebSocket, falling back to SPDY for API servers that lack it) and
// returns what it wrote. A command that exits non-zero returns an error
// wrapping *ExitError with the exit code and stderr. The pod is read first,
// so a missing pod or container gives a clear error instead of a failed
// stream upgrade. Exec does not retry: commands need not be idempotent.
func (c *Client) Exec(ctx context.Context, namespace, pod, container string, command []string) (stdout, stderr []byte, err error) {
	return c.ExecWithInput(ctx, namespace, pod, container, command, nil)
}

// ExecWithInput is Exec with stdin, when not nil, as the command's standard
// input (`spire-server bundle set` reads the bundle from it, so nothing has
// to be written into the pod first).
func (c *Client) ExecWithInput(ctx context.Context, namespace, pod, container string, command []string, stdin io.Reader) (stdout, stderr []byte, err error) {
	obj, err := c.Get(ctx, Pod, namespace, pod)
	if err != nil {
		return nil, nil, err
	}
	if !podHasContainer(obj.Object, container) {
		return nil, nil, &OpError{Cluster: c.DisplayName(), Verb: "create", Kind: podExec, Namespace: namespace, Name: pod,
			Err: fmt.Errorf("%w: pod %s/%s has no container %q (containers: %s)", ErrContainerNotFound, namespace, pod, container,
				strings.Join(podContainers(obj.Object), ", "))}
	}

	cfg := rest.CopyConfig(c.rest)
	cfg.APIPath = "/api"
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(coreV1).WithoutConversion()
	restClient, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("building the REST client for pod exec: %w", err)
	}
	req := restClient.Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command, Stdin: stdin != nil, Stdout: true, Stderr: true},
			runtime.NewParameterCodec(coreV1))

	ws, err := remotecommand.NewWebSocketExecutor(cfg, "GET", req.URL().String())
	if err != nil {
		return nil, nil, fmt.Errorf("building the WebSocket executor: %w", err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
	if err != nil {
		return nil, nil, fmt.Errorf("building the SPDY executor: %w", err)
	}
	executor, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		// An API server that refused the request itself (RBAC, admission)
		// refuses it over SPDY too: asking again only repeats the refusal.
		if refusedUpgrade(err) != nil {
			return false
		}
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return nil, nil, err
	}
	var out, errOut bytes.Buffer
	err = c.refusedOnce(requestKey("create", podExec, namespace, pod), func() error {
		err := executor.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: &out, Stderr: &errOut})
		if status := refusedUpgrade(err); status != nil {
			// The API server's answer (a 403 names the verb and resource
			// RBAC checked), not the WebSocket wrapper that hides it.
			return status
		}
		return err
	})
	if err != nil {
		var exit utilexec.ExitError
		if errors.As(err, &exit) && exit.Exited() {
			err = &ExitError{Code: exit.ExitStatus(), Stderr: strings.TrimSpace(errOut.String())}
		}
		return out.Bytes(), errOut.Bytes(), &OpError{Cluster: c.DisplayName(), Verb: "create", Kind: podExec,
			Namespace: namespace, Name: pod, Err: fmt.Errorf("exec %q in container %q: %w", strings.Join(command, " "), container, err)}
	}
	return out.Bytes(), errOut.Bytes(), nil
}

func podContainers(pod map[string]any) []string {
	var names []string
	spec, _ := pod["spec"].(map[string]any)
	for _, field := range []string{"containers", "initContainers", "ephemeralContainers"} {
		list, _ := spec[field].([]any)
		for _, item := range list {
			m, _ := item.(map[string]any)
			if name, _ := m["name"].(string); name != "" {
				names = append(names, name)
			}
		}
	}
	return names
}

func podHasContainer(pod map[string]any, container string) bool {
	for _, name := range podContainers(pod) {
		if name == container {
			return true
		}
	}
	return false
}

// refusedUpgrade returns the API server's own answer when a WebSocket
// upgrade failed because the server refused the request (403 Forbidden, 401
// Unauthorized), nil otherwise. client-go decodes that answer into the
// failure's Cause, which httpstream.UpgradeFailureError does not unwrap.
func refusedUpgrade(err error) error {
	var upgrade *httpstream.UpgradeFailureError
	if !errors.As(err, &upgrade) {
		return nil
	}
	if apierrors.IsForbidden(upgrade.Cause) || apierrors.IsUnauthorized(upgrade.Cause) {
		return upgrade.Cause
	}
	return nil
}
