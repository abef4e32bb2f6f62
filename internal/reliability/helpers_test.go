package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/testkit/harness"
)

// identityNamespace holds the service accounts the provider authenticates
// as: each part of the suite has its own identity, so the audit log tells
// its requests apart from the test's own setup (done as admin) and from the
// apiserver's internal clients.
const identityNamespace = "reliability"

// identity is a service account with cluster-admin rights and a bearer
// token for it. Unlike the harness admin it is not in system:masters, so the
// apiserver's in-flight limits apply to it.
type identity struct {
	User  string // as the audit log records it
	Token string
}

func newIdentity(t *testing.T, c *harness.Cluster, name string) identity {
	t.Helper()
	return identityBoundTo(t, c, name, "cluster-admin", nil)
}

// identityBoundTo is a service account bound cluster-wide to the ClusterRole
// role, which it creates with rules unless rules is nil (an existing role),
// and a bearer token for it.
func identityBoundTo(t *testing.T, c *harness.Cluster, name, role string, rules []rbacv1.PolicyRule) identity {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	create := func(what string, err error) {
		t.Helper()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("cluster %s: creating %s for identity %s: %v", c.Name, what, name, err)
		}
	}
	_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: identityNamespace}}, metav1.CreateOptions{})
	create("namespace", err)
	_, err = cs.CoreV1().ServiceAccounts(identityNamespace).Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	create("service account", err)
	if rules != nil {
		_, err = cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: rules},
			metav1.CreateOptions{})
		create("cluster role", err)
	}
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reliability-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: identityNamespace}},
	}, metav1.CreateOptions{})
	create("cluster role binding", err)
	expiry := int64(2 * 3600)
	tr, err := cs.CoreV1().ServiceAccounts(identityNamespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("cluster %s: token for %s: %v", c.Name, name, err)
	}
	return identity{User: "system:serviceaccount:" + identityNamespace + ":" + name, Token: tr.Status.Token}
}

// providerBlock is a provider configuration reaching each named cluster
// through host/token/CA as who; the first one is also the default connection.
func providerBlock(who map[string]identity, names ...string) string {
	var b strings.Builder
	first := lab.Cluster(names[0])
	fmt.Fprintf(&b, "provider \"zerotrust\" {\n  kubernetes = %s\n  clusters = {\n", connection(first, who[names[0]].Token, "  "))
	for _, n := range names {
		fmt.Fprintf(&b, "    %s = %s\n", n, connection(lab.Cluster(n), who[n].Token, "    "))
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

func connection(c *harness.Cluster, token, indent string) string {
	return fmt.Sprintf("{\n%[1]s  host  = %[2]q\n%[1]s  token = %[3]q\n%[1]s  cluster_ca_certificate = <<-EOT\n%[4]s\nEOT\n%[1]s}",
		indent, c.Host, token, strings.TrimSpace(string(c.CACertPEM)))
}

// auditCounts are the requests one user made, by verb class, from the
// apiserver audit log (one JSON event per line, Metadata level).
type auditCounts struct {
	Reads, Writes int
	TooMany       int      // responses 429
	WriteLines    []string // "verb uri" of each write, for the failure message
}

var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// countAudit reads c's audit log (and its rotated backup) and counts the
// requests made by user. Only ResponseComplete events are counted, so a
// request is counted once however many stages it logs.
func countAudit(t *testing.T, c *harness.Cluster, user string) auditCounts {
	t.Helper()
	var counts auditCounts
	paths, _ := filepath.Glob(strings.TrimSuffix(c.AuditLogPath(), ".log") + "-*.log")
	paths = append(paths, c.AuditLogPath())
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatalf("audit log: %v", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ev struct {
				Stage      string `json:"stage"`
				Verb       string `json:"verb"`
				RequestURI string `json:"requestURI"`
				User       struct {
					Username string `json:"username"`
				} `json:"user"`
				ResponseStatus struct {
					Code int `json:"code"`
				} `json:"responseStatus"`
			}
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				f.Close()
				t.Fatalf("audit log %s: unparsable line %q: %v", p, sc.Text(), err)
			}
			if ev.Stage != "ResponseComplete" || ev.User.Username != user {
				continue
			}
			if ev.ResponseStatus.Code == 429 {
				counts.TooMany++
			}
			if writeVerbs[ev.Verb] {
				counts.Writes++
				counts.WriteLines = append(counts.WriteLines, ev.Verb+" "+ev.RequestURI)
			} else {
				counts.Reads++
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			t.Fatalf("audit log %s: %v", p, err)
		}
	}
	return counts
}

var cftdGVR = kube.ClusterFederatedTrustDomain.GVR()

// cftdNames lists the ClusterFederatedTrustDomains on c whose name starts
// with prefix, asked as admin (not through the provider).
func cftdNames(ctx context.Context, c *harness.Cluster, prefix string) ([]string, error) {
	d, err := dynamic.NewForConfig(c.RESTConfig())
	if err != nil {
		return nil, err
	}
	list, err := d.Resource(cftdGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, item := range list.Items {
		if strings.HasPrefix(item.GetName(), prefix) {
			names = append(names, item.GetName())
		}
	}
	return names, nil
}

// tfDir is a terraform working directory run through os/exec with the
// locally built provider (dev_overrides, so no init).
type tfDir struct {
	t   *testing.T
	dir string
	env []string
}

func newTFDir(t *testing.T, name string) *tfDir {
	t.Helper()
	setup(t)
	pdir := providerBinaryDir(t)
	dir := filepath.Join(work, "tf", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(dir, "terraformrc")
	cfg := fmt.Sprintf("disable_checkpoint = true\nprovider_installation {\n  dev_overrides {\n    \"ztfabric/zerotrust\" = %q\n  }\n  direct {}\n}\n", pdir)
	if err := os.WriteFile(rc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TF_LOG") || strings.HasPrefix(kv, "TF_CLI_CONFIG_FILE=") || strings.HasPrefix(kv, "TF_ACC") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "HOME="+dir,
		"TF_PLUGIN_CACHE_DIR=", "KUBECACHEDIR="+filepath.Join(dir, "kubecache"))
	return &tfDir{t: t, dir: dir, env: env}
}

func (d *tfDir) write(config string) {
	d.t.Helper()
	cfg := "terraform {\n  required_providers {\n    zerotrust = { source = \"ztfabric/zerotrust\" }\n  }\n}\n" + config
	if err := os.WriteFile(filepath.Join(d.dir, "main.tf"), []byte(cfg), 0o600); err != nil {
		d.t.Fatal(err)
	}
}

// start launches terraform with args; the caller waits on the command.
func (d *tfDir) start(out *bytes.Buffer, extraEnv []string, args ...string) *exec.Cmd {
	d.t.Helper()
	cmd := exec.Command(terraform, append(args, "-no-color")...)
	cmd.Dir = d.dir
	cmd.Env = append(append([]string{}, d.env...), extraEnv...)
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so a test can kill terraform with its provider.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		d.t.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
	}
	return cmd
}

// run runs terraform to completion and returns its exit code and output.
func (d *tfDir) run(extraEnv []string, args ...string) (int, string) {
	d.t.Helper()
	var out bytes.Buffer
	cmd := d.start(&out, extraEnv, args...)
	err := cmd.Wait()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			d.t.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return code, out.String()
}

// mustApply applies and fails the test on any error.
func (d *tfDir) mustApply(extraEnv []string, args ...string) string {
	d.t.Helper()
	code, out := d.run(extraEnv, append([]string{"apply", "-auto-approve", "-input=false"}, args...)...)
	if code != 0 {
		d.t.Fatalf("terraform apply failed (exit %d):\n%s", code, tail(out, 60))
	}
	return out
}

// expectEmptyPlan runs a refreshing plan and fails unless it has no changes.
func (d *tfDir) expectEmptyPlan() {
	d.t.Helper()
	code, out := d.run(nil, "plan", "-input=false", "-detailed-exitcode")
	if code != 0 {
		d.t.Fatalf("plan after apply is not empty (exit %d):\n%s", code, tail(out, 60))
	}
}

// stateAddresses lists the resource instances in the state.
func (d *tfDir) stateAddresses() []string {
	d.t.Helper()
	code, out := d.run(nil, "state", "list")
	if code != 0 {
		d.t.Fatalf("terraform state list (exit %d):\n%s", code, out)
	}
	var addrs []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			addrs = append(addrs, l)
		}
	}
	return addrs
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// ftdsConfig is count FTDs on cluster named prefix-<i>, each federating with
// its own trust domain <prefix>-<i>.test over https_web.
func ftdsConfig(clusterKey, prefix string, count int) string {
	return fmt.Sprintf(`
resource "zerotrust_federated_trust_domain" %[2]q {
  count                   = %[3]d
  cluster                 = %[1]q
  name                    = "%[2]s-${count.index}"
  trust_domain            = "%[2]s-${count.index}.test"
  bundle_endpoint_url     = "https://bundles.%[2]s-${count.index}.test"
  bundle_endpoint_profile = { type = "https_web" }
  # The suite's clusters run no SPIRE server to ask or remove bundles from.
  delete_bundle_on_destroy = false
  check_spire              = false
}
`, clusterKey, prefix, count)
}

// checkQuietApply fails the test if an apply's output shows throttling, an
// error or any warning other than the dev_overrides notice.
func checkQuietApply(t *testing.T, out string) {
	t.Helper()
	for _, l := range applyProblems(out, work) {
		t.Errorf("apply output: %q\n%s", l, tail(out, 40))
	}
}

// throttled matches what a throttling answer shows in Terraform's output
// (the status code as a word, its reason, client-go's rate limiter).
var throttled = regexp.MustCompile(`(?i)\b429\b|too many requests|rate limit`)

// applyProblems returns the lines of an apply's output that show an error,
// a warning other than the dev_overrides notice, or throttling. The suite's
// own directory (work) is taken out of each line first: the notice prints
// the provider's path, and a temporary directory whose random name held
// "429" once made a clean CI run look throttled.
func applyProblems(out, work string) []string {
	var problems []string
	for _, line := range strings.Split(out, "\n") {
		l := strings.TrimSpace(strings.TrimLeft(line, "│╷╵ "))
		switch {
		case strings.HasPrefix(l, "Warning: Provider development overrides are in effect"):
		case strings.HasPrefix(l, "Warning:"), strings.HasPrefix(l, "Error:"),
			throttled.MatchString(strings.ReplaceAll(l, work, "<work>")):
			problems = append(problems, l)
		}
	}
	return problems
}
