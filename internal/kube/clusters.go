package kube

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Settings are the provider-wide client settings.
type Settings struct {
	FieldManager string
	QPS          float32
	Burst        int
	UserAgent    string
	// ReconnectTimeout is every client's (Client.ReconnectTimeout).
	ReconnectTimeout time.Duration
}

// Clusters holds every configured connection and builds each client on first
// use, once. Building lazily keeps `terraform plan` working when a cluster is
// created in the same apply: its connection is only needed when a resource on
// it is read or written.
type Clusters struct {
	settings Settings
	conns    map[string]*lazyClient
}

type lazyClient struct {
	name    string
	conn    Connection
	unknown bool
	once    sync.Once
	client  *Client
	err     error
}

// DefaultKey is the key of the provider's `kubernetes` connection.
const DefaultKey = ""

// NewClusters starts an empty registry.
func NewClusters(s Settings) *Clusters {
	return &Clusters{settings: s, conns: map[string]*lazyClient{}}
}

// Add registers a connection under key. unknown marks a connection whose
// values Terraform does not know yet (planning before the cluster exists).
func (c *Clusters) Add(key string, conn Connection, unknown bool) {
	c.conns[key] = &lazyClient{name: key, conn: conn, unknown: unknown}
}

// Keys lists the named clusters (without the default connection), sorted.
func (c *Clusters) Keys() []string {
	keys := make([]string, 0, len(c.conns))
	for k := range c.conns {
		if k != DefaultKey {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// Known reports whether key names a configured cluster.
func (c *Clusters) Known(key string) bool {
	_, ok := c.conns[key]
	return ok
}

// UnknownKeyError is the message for a `cluster` value that names no cluster.
func (c *Clusters) UnknownKeyError(key string) string {
	keys := c.Keys()
	if len(keys) == 0 {
		return fmt.Sprintf("The provider has no `clusters` map, so %q names no cluster. Add it to the provider's "+
			"`clusters` map, or leave `cluster` unset to use the provider's `kubernetes` connection.", key)
	}
	return fmt.Sprintf("%q is not a key of the provider's `clusters` map. Valid keys: %s. Leave `cluster` unset "+
		"to use the provider's `kubernetes` connection.", key, quoteAll(keys))
}

// IsUnknown reports whether the connection for key is not known yet.
func (c *Clusters) IsUnknown(key string) bool {
	l, ok := c.conns[key]
	return ok && l.unknown
}

// Client returns the client for key, building it on first use.
func (c *Clusters) Client(key string) (*Client, error) {
	l, ok := c.conns[key]
	if !ok {
		if key == DefaultKey {
			return nil, fmt.Errorf("no default cluster connection: configure the provider's `kubernetes` block " +
				"(or KUBE_CONFIG_PATH / KUBE_HOST), or set `cluster` to a key of the provider's `clusters` map")
		}
		return nil, fmt.Errorf("%s", c.UnknownKeyError(key))
	}
	if l.unknown {
		return nil, fmt.Errorf("the connection of cluster %q is not known yet (it depends on values computed during apply)", displayKey(key))
	}
	l.once.Do(func() {
		var cfg *rest.Config
		cfg, l.err = l.conn.RESTConfig()
		if l.err != nil {
			l.err = fmt.Errorf("cluster %q: %w", displayKey(key), l.err)
			return
		}
		cfg.QPS = c.settings.QPS
		cfg.Burst = c.settings.Burst
		cfg.UserAgent = c.settings.UserAgent
		// API warnings (deprecations) would go to the provider's stderr, which
		// Terraform only shows in TF_LOG output; they carry nothing users act on here.
		cfg.WarningHandler = rest.NoWarnings{}
		l.client, l.err = NewClient(key, cfg, c.settings.FieldManager)
		if l.client != nil {
			l.client.ReconnectTimeout = c.settings.ReconnectTimeout
		}
	})
	return l.client, l.err
}

func displayKey(key string) string {
	if key == DefaultKey {
		return "default"
	}
	return key
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
