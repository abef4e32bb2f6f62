package acctest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestStartRetryingOnTimeout(t *testing.T) {
	timeout := fmt.Errorf("kube-apiserver not ready after 90s (%w)", context.DeadlineExceeded)
	permanent := errors.New("harness: loading CRDs: b.yaml found nowhere")
	cases := []struct {
		name      string
		answers   []error
		wantDirs  []string
		wantError []string // substrings; none means success
	}{
		{"first start works", []error{nil}, []string{"d"}, nil},
		{"a timeout is retried once, in a directory of its own", []error{timeout, nil}, []string{"d", "d-retry"}, nil},
		{"a permanent failure is not retried", []error{permanent}, []string{"d"}, []string{"found nowhere"}},
		{"two timeouts fail, naming both", []error{timeout, timeout}, []string{"d", "d-retry"},
			[]string{"did not start in time, and the one retry failed too", "First start: kube-apiserver", "Retry: kube-apiserver"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var dirs []string
			_, err := startRetryingOnTimeout("lab", "d", func(dir string) (int, error) {
				dirs = append(dirs, dir)
				return 0, c.answers[len(dirs)-1]
			})
			if strings.Join(dirs, ",") != strings.Join(c.wantDirs, ",") {
				t.Errorf("started in %v, want %v", dirs, c.wantDirs)
			}
			if len(c.wantError) == 0 {
				if err != nil {
					t.Errorf("err = %v, want none", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.wantError {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
