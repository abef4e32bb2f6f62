package providerdata

import (
	"testing"

	"k8s.io/client-go/rest"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// TestWarnsUnreachable: a cluster's own on_unreachable wins, then the
// provider's, then "warn".
func TestWarnsUnreachable(t *testing.T) {
	client := func(name string) *kube.Client {
		c, err := kube.NewClient(name, &rest.Config{Host: "https://127.0.0.1:1"}, "zerotrust-test")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		name             string
		own, provider    string
		wantWarnsOnFault bool
	}{
		{"nothing set", "", "", true},
		{"provider error", "", OnUnreachableError, false},
		{"provider warn", "", OnUnreachableWarn, true},
		{"own error over provider warn", OnUnreachableError, OnUnreachableWarn, false},
		{"own warn over provider error", OnUnreachableWarn, OnUnreachableError, true},
	} {
		d := &Data{OnUnreachable: map[string]string{"east": tc.own}, OnUnreachableDefault: tc.provider}
		if got := d.WarnsUnreachable(client("east")); got != tc.wantWarnsOnFault {
			t.Errorf("%s: WarnsUnreachable = %v, want %v", tc.name, got, tc.wantWarnsOnFault)
		}
	}
}
