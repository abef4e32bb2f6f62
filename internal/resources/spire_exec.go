package resources

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

const (
	defaultSpirePod       = "spire-server-0"
	defaultSpireContainer = "spire-server"
	spirePollInterval     = time.Second
)

// spireServerModel locates the SPIRE server a resource asks through pod exec.
type spireServerModel struct {
	Namespace types.String `tfsdk:"namespace"`
	Pod       types.String `tfsdk:"pod"`
	Container types.String `tfsdk:"container"`
}

func spireServerAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Optional: true,
		MarkdownDescription: "The SPIRE server pod that `wait_for_bundle` and `delete_bundle_on_destroy` ask through pod " +
			"exec (`spire-server bundle ...`). Needs `create` on `pods/exec` in that namespace.",
		Attributes: map[string]schema.Attribute{
			"namespace": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Namespace of the SPIRE server pod. Defaults to the provider's `spire.namespace`.",
			},
			"pod": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Pod name. Defaults to `" + defaultSpirePod + "`.",
			},
			"container": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "Container running `spire-server`. Defaults to `" + defaultSpireContainer + "`.",
			},
		},
	}
}

type spireTarget struct {
	client                    *kube.Client
	namespace, pod, container string
}

func (s spireTarget) String() string {
	return fmt.Sprintf("SPIRE server pod %s/%s (container %s) on cluster %q", s.namespace, s.pod, s.container, s.client.DisplayName())
}

// run runs spire-server with args in the pod; only the outcome matters to
// its callers (the command's own error output is in err).
func (s spireTarget) run(ctx context.Context, args ...string) error {
	_, _, err := s.client.Exec(ctx, s.namespace, s.pod, s.container, append([]string{"spire-server"}, args...))
	return err
}

// waitForBundle polls until SPIRE holds the bundle of td: the readiness signal
// ClusterFederatedTrustDomain lacks (its status is empty, and the controller
// reconciles asynchronously).
func (s spireTarget) waitForBundle(ctx context.Context, td string) error {
	var last error
	for {
		err := s.run(ctx, "bundle", "list", "-id", "spiffe://"+td)
		if err == nil {
			return nil
		}
		if permanentExecError(err) {
			return err
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s still does not hold the bundle of %q: %w (last answer: %v)", s, td, ctx.Err(), last)
		case <-time.After(spirePollInterval):
		}
	}
}

// deleteBundle removes td's bundle once spire-controller-manager has removed
// the federation relationship; deleting it earlier would let SPIRE fetch it
// again from the peer's endpoint.
func (s spireTarget) deleteBundle(ctx context.Context, td string) error {
	var last error
	for {
		err := s.run(ctx, "federation", "show", "-trustDomain", td)
		switch {
		case isNotFoundExit(err):
			err = s.run(ctx, "bundle", "delete", "-id", "spiffe://"+td)
			if err == nil || isNotFoundExit(err) {
				return nil
			}
			last = err
		case err == nil:
			last = fmt.Errorf("the federation relationship with %q still exists", td)
		case permanentExecError(err):
			return err
		default:
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("could not delete the bundle of %q from %s: %w (last answer: %v)", td, s, ctx.Err(), last)
		case <-time.After(spirePollInterval):
		}
	}
}

// isNotFoundExit reports a spire-server CLI failure because the thing asked
// for does not exist: the CLI prints the gRPC NotFound status
// ("code = NotFound desc = federation relationship does not exist") or, for
// batch calls, "bundle not found".
func isNotFoundExit(err error) bool {
	var exit *kube.ExitError
	if !errors.As(err, &exit) {
		return false
	}
	text := strings.ToLower(exit.Stderr)
	return strings.Contains(text, "code = notfound") || strings.Contains(text, "not found")
}

// permanentExecError is an exec failure no retry fixes: no such container,
// or no right to exec.
func permanentExecError(err error) bool {
	return errors.Is(err, kube.ErrContainerNotFound) || apierrors.IsForbidden(err)
}
