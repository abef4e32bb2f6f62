package resources

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// The texts are what spire-server 1.15 prints (seen through pod exec).
func TestIsNotFoundExit(t *testing.T) {
	for text, want := range map[string]bool{
		"Error: error showing federation relationship: rpc error: code = NotFound desc = federation relationship does not exist\n": true,
		"Error: failed to delete federated bundle \"spiffe://nope.test\": bundle not found\n":                                      true,
		"Error: rpc error: code = NotFound desc = bundle not found\n":                                                              true,
		"Error: connection error: desc = \"transport: error while dialing: dial unix /tmp/api.sock: connect: no such file\"\n":     false,
	} {
		err := fmt.Errorf("exec: %w", &kube.ExitError{Code: 1, Stderr: text})
		if got := isNotFoundExit(err); got != want {
			t.Errorf("isNotFoundExit(%q) = %v, want %v", text, got, want)
		}
	}
	if isNotFoundExit(errors.New("not found")) {
		t.Error("only exit errors of the CLI count")
	}
}
