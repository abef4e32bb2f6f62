package leastprivilege_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/acctest"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/rbac"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// exercise is the Terraform operation that needs one rule (or rules one
// operation cannot tell apart) of the table, run with that rule taken out.
type exercise struct {
	// rule is the rule's key (rbac.Rule.Key).
	rule string
	// ns is where the access review asks, for the namespaced roles.
	ns string
	// object is how the message names the object the request was for.
	object string
	// run runs the operation through s, one terraform command at a time.
	run func(t *testing.T, s *session)
	// warns is set where the provider deliberately degrades: the run
	// succeeds and a warning says what was not allowed.
	warns bool
	// before prepares, with every rule granted, what run needs.
	before func(t *testing.T)
	// after puts back, with every rule granted, what run changed.
	after func(t *testing.T)
}

var clusterRoleGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}

// saUser is the ServiceAccount's user name in the audit log.
var saUser = "system:serviceaccount:" + strings.Replace(saName, "/", ":", 1)

// withoutRule takes r out of its ClusterRole (in place, as an administrator
// would), waits until the API server denies it to the ServiceAccount, runs
// f, and puts the rule back.
func (e *env) withoutRule(t *testing.T, r rbac.Rule, ns string, f func()) {
	t.Helper()
	ctx := context.Background()
	ri := acctest.Dynamic(t, clusterName).Resource(clusterRoleGVR)
	var original []any
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		role, err := ri.Get(ctx, r.Role, metav1.GetOptions{})
		if err != nil {
			return err
		}
		rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
		original = rules
		var kept []any
		for _, item := range rules {
			m, _ := item.(map[string]any)
			groups, _, _ := unstructured.NestedStringSlice(m, "apiGroups")
			resources, _, _ := unstructured.NestedStringSlice(m, "resources")
			verbs, _, _ := unstructured.NestedStringSlice(m, "verbs")
			if slices.Equal(groups, []string{r.Group}) && slices.Equal(resources, []string{r.Resource}) {
				verbs = slices.DeleteFunc(slices.Clone(verbs), func(v string) bool { return v == r.Verb })
				if len(verbs) == 0 {
					continue
				}
				m = map[string]any{"apiGroups": toAny(groups), "resources": toAny(resources), "verbs": toAny(verbs)}
			}
			kept = append(kept, m)
		}
		if err := unstructured.SetNestedSlice(role.Object, kept, "rules"); err != nil {
			return err
		}
		_, err = ri.Update(ctx, role, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("taking %s out: %v", r.Key(), err)
	}
	access := accessOf(r, ns)
	if err := e.c.WaitAccess(ctx, e.token, access, false); err != nil {
		t.Fatal(err)
	}
	defer func() {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			role, err := ri.Get(ctx, r.Role, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if err := unstructured.SetNestedSlice(role.Object, original, "rules"); err != nil {
				return err
			}
			_, err = ri.Update(ctx, role, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("putting %s back: %v", r.Key(), err)
		}
		if err := e.c.WaitAccess(ctx, e.token, access, true); err != nil {
			t.Fatal(err)
		}
	}()
	f()
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func accessOf(r rbac.Rule, ns string) harness.Access {
	resource, sub, _ := strings.Cut(r.Resource, "/")
	return harness.Access{Verb: r.Verb, Group: r.Group, Resource: resource, Subresource: sub, Namespace: ns}
}

// auditEvent is the part of an audit log line the checks read.
type auditEvent struct {
	Stage      string `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// auditOffset is the audit log's current length: denied requests are
// counted from there.
func (e *env) auditOffset(t *testing.T) int64 {
	t.Helper()
	fi, err := os.Stat(e.c.AuditLogPath())
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// denied returns, per request URI, how often the API server refused the
// ServiceAccount a request for r's resource between offset and end.
func (e *env) denied(t *testing.T, offset, end int64, r rbac.Rule) map[string]int {
	t.Helper()
	f, err := os.Open(e.c.AuditLogPath())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	resource, sub, _ := strings.Cut(r.Resource, "/")
	out := map[string]int{}
	sc := bufio.NewScanner(io.LimitReader(f, end-offset))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev auditEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage != "ResponseComplete" || ev.User.Username != saUser ||
			ev.ResponseStatus.Code != 403 || ev.ObjectRef.Resource != resource || ev.ObjectRef.Subresource != sub ||
			ev.ObjectRef.APIGroup != r.Group {
			continue
		}
		out[ev.RequestURI]++
	}
	return out
}

// session runs the terraform commands of one exercise and records, per
// command, its output, exit code and where its requests start and end in
// the audit log.
type session struct {
	e     *env
	steps []step
}

type step struct {
	args     []string
	out      string
	code     int
	from, to int64
}

// tf runs one terraform command in dir.
func (s *session) tf(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	from := s.e.auditOffset(t)
	out, code := s.e.tf(t, dir, args...)
	s.steps = append(s.steps, step{args: args, out: out, code: code, from: from, to: s.e.auditOffset(t)})
	return out, code
}

// checkRule runs x with its rule taken out and checks that Terraform says,
// in one message, which verb on which resource for which object on which
// cluster was refused, and that the refused request was sent once.
func (e *env) checkRule(t *testing.T, x exercise) {
	t.Helper()
	i := slices.IndexFunc(rbac.Rules, func(r rbac.Rule) bool { return r.Key() == x.rule })
	if i < 0 {
		t.Fatalf("no rule %q in the table", x.rule)
	}
	r := rbac.Rules[i]
	if x.before != nil {
		x.before(t)
	}
	s := &session{e: e}
	start := time.Now()
	e.withoutRule(t, r, x.ns, func() { x.run(t, s) })
	took := time.Since(start)
	if x.after != nil {
		defer x.after(t)
	}
	if len(s.steps) == 0 {
		t.Fatalf("%s: the exercise ran no terraform command", x.rule)
	}
	var outs []string
	for _, st := range s.steps {
		outs = append(outs, st.out)
	}
	out, code := strings.Join(outs, "\n"), s.steps[len(s.steps)-1].code
	switch {
	case x.warns && code != 0:
		t.Errorf("%s: want a warning and success, got exit %d:\n%s", x.rule, code, out)
	case !x.warns && code == 0:
		t.Errorf("%s: want a failure, got success:\n%s", x.rule, out)
	}
	resource := r.GroupResource()
	// object may be a prefix (generated names): the sentence is matched up
	// to it.
	expect(t, x.rule, out, fmt.Sprintf(`cluster "default" may not %q the resource %q (object: %s`, r.Verb, resource, x.object))
	// Each terraform command is one walk of the graph: within it a refused
	// request is sent once, whatever asks for it (plan-time checks, Read,
	// the apply, data sources).
	refused := 0
	for _, st := range s.steps {
		for uri, n := range e.denied(t, st.from, st.to, r) {
			refused += n
			if n > 1 {
				t.Errorf("%s: terraform %s: %s was refused %d times: a refusal must not be retried", x.rule,
					strings.Join(st.args, " "), uri, n)
			}
		}
	}
	if refused == 0 {
		t.Errorf("%s: the audit log shows no refused request for %s", x.rule, resource)
	}
	t.Logf("%s: refused once, reported in %s", x.rule, took.Round(100*time.Millisecond))
}
