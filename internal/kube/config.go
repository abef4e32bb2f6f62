package kube

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Connection is one resolved cluster connection: the same inputs as the
// hashicorp/kubernetes provider, so users can move a block across unchanged.
type Connection struct {
	ConfigPaths           []string
	ConfigContext         string
	ConfigContextAuthInfo string
	ConfigContextCluster  string

	Host                 string
	Token                string
	ClientCertificate    string
	ClientKey            string
	ClusterCACertificate string
	Insecure             bool
	TLSServerName        string
	ProxyURL             string
	Exec                 *ExecConfig
}

// ExecConfig runs a credential plugin (aws eks get-token, gke-gcloud-auth-plugin, kubelogin).
type ExecConfig struct {
	APIVersion string
	Command    string
	Args       []string
	Env        map[string]string
}

// IsEmpty reports whether nothing at all was configured.
func (c Connection) IsEmpty() bool {
	return len(c.ConfigPaths) == 0 && c.Host == "" && c.Token == "" && c.ClientCertificate == "" &&
		c.ClusterCACertificate == "" && c.Exec == nil && c.ConfigContext == ""
}

// ErrNoConnection is returned when a cluster has neither a kubeconfig nor a host.
var ErrNoConnection = errors.New("no kubeconfig path and no host configured")

// RESTConfig resolves the connection into a client-go configuration. Explicit
// attributes override what a kubeconfig file says, as in the kubernetes provider.
func (c Connection) RESTConfig() (*rest.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{}
	for _, p := range c.ConfigPaths {
		expanded, err := expandHome(p)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(expanded); err != nil {
			return nil, fmt.Errorf("kubeconfig %q: %w", p, err)
		}
		rules.Precedence = append(rules.Precedence, expanded)
	}
	if len(rules.Precedence) == 0 && c.Host == "" {
		return nil, ErrNoConnection
	}

	overrides := &clientcmd.ConfigOverrides{}
	overrides.CurrentContext = c.ConfigContext
	overrides.Context.AuthInfo = c.ConfigContextAuthInfo
	overrides.Context.Cluster = c.ConfigContextCluster
	if c.Host != "" {
		overrides.ClusterInfo.Server = c.Host
	}
	if c.ClusterCACertificate != "" {
		overrides.ClusterInfo.CertificateAuthorityData = []byte(c.ClusterCACertificate)
	}
	overrides.ClusterInfo.InsecureSkipTLSVerify = c.Insecure
	overrides.ClusterInfo.TLSServerName = c.TLSServerName
	overrides.ClusterInfo.ProxyURL = c.ProxyURL
	overrides.AuthInfo.Token = c.Token
	if c.ClientCertificate != "" {
		overrides.AuthInfo.ClientCertificateData = []byte(c.ClientCertificate)
	}
	if c.ClientKey != "" {
		overrides.AuthInfo.ClientKeyData = []byte(c.ClientKey)
	}
	if c.Exec != nil {
		exec := &clientcmdapi.ExecConfig{
			APIVersion:      c.Exec.APIVersion,
			Command:         c.Exec.Command,
			Args:            c.Exec.Args,
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}
		for k, v := range c.Exec.Env {
			exec.Env = append(exec.Env, clientcmdapi.ExecEnvVar{Name: k, Value: v})
		}
		overrides.AuthInfo.Exec = exec
	}

	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expanding %q: %w", p, err)
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
}
