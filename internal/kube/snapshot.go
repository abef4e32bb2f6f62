package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// refreshSnapshotAfter is how many objects of one kind a client reads one by
// one for refreshes before it lists the kind once and serves further
// refreshes from that list. A plan refreshes every object it manages, and
// one GET each costs the API servers many times the CPU of a paged LIST per
// cluster (bench/ANALYSIS.md). Small configurations keep exact GETs.
const refreshSnapshotAfter = 8

// snapshotPageSize bounds one LIST response (pages follow with continue).
const snapshotPageSize = 500

type snapshot struct {
	reads atomic.Int64
	once  sync.Once
	mu    sync.Mutex
	items map[string]json.RawMessage // "namespace/name" -> object as listed
	err   error
}

func (c *Client) snapshotOf(kind Kind) *snapshot {
	v, _ := c.snapshots.LoadOrStore(kind.GVR(), &snapshot{})
	s, _ := v.(*snapshot) // snapshots holds nothing else
	return s
}

// GetForRefresh is Get for a resource's Read, which Terraform calls for every
// managed object in a plan. After refreshSnapshotAfter reads of kind it
// answers from one LIST of the kind taken then (a client lives for one
// Terraform graph walk, and a plan's refresh writes nothing, so that list is
// as current as a GET would be), each listed object at most once. Anything
// the list cannot answer (not listed, listed already, LIST refused: RBAC
// may allow get without list) falls back to Get, so the answer is never
// worse than Get's.
func (c *Client) GetForRefresh(ctx context.Context, kind Kind, namespace, name string) (*Refreshed, error) {
	get := func() (*Refreshed, error) {
		obj, err := c.Get(ctx, kind, namespace, name)
		if err != nil {
			return nil, err
		}
		return &Refreshed{Object: obj}, nil
	}
	s := c.snapshotOf(kind)
	if s.reads.Add(1) <= refreshSnapshotAfter {
		return get()
	}
	s.once.Do(func() { s.items, s.err = c.listRaw(ctx, kind) })
	if s.err != nil {
		return get()
	}
	key := namespace + "/" + name
	s.mu.Lock()
	raw, ok := s.items[key]
	// Each object is served once: a second read in the same walk asks the
	// API server, and the memory goes as the walk proceeds.
	delete(s.items, key)
	s.mu.Unlock()
	if !ok {
		return get()
	}
	obj, err := DecodeListItem(raw, kind)
	if err != nil {
		return get()
	}
	return obj, nil
}

// DecodeListItem decodes one item of a LIST of kind as GetForRefresh serves
// it: everything but metadata.managedFields, which stay raw until asked
// (Refreshed). raw must be valid JSON, as every item of a page listRaw
// decoded is: the managed fields are cut out by a scan that does not check
// what it skips.
func DecodeListItem(raw []byte, kind Kind) (*Refreshed, error) {
	out := &Refreshed{Object: &unstructured.Unstructured{}}
	rest, managedFields, ok := cutManagedFields(raw)
	if ok {
		raw, out.managedFields = rest, managedFields
	}
	if err := out.Object.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	// List items of built-in kinds omit these; custom resources carry them.
	if out.Object.GetAPIVersion() == "" || out.Object.GetKind() == "" {
		out.Object.SetAPIVersion(kind.APIVersion())
		out.Object.SetKind(kind.Kind)
	}
	return out, nil
}

// listRaw lists every object of kind (all namespaces), page by page, and
// keeps each item's JSON undecoded: raw bytes hold no pointers for the
// garbage collector to trace and cost a third of decoded unstructured maps.
// client-go's tools/pager would decode every page into objects (its
// ListFunc returns a runtime.Object and EachListItem walks decoded items),
// which is what this avoids. What the pager adds beyond paging, a fallback to
// one full LIST when a continue token has expired (410 Gone), listRaw
// leaves to GetForRefresh: an error here makes every read a GET. Not for
// size: tools/pager would add 72 KiB (0.24%) to the release binary
// (bench/ANALYSIS.md).
func (c *Client) listRaw(ctx context.Context, kind Kind) (map[string]json.RawMessage, error) {
	items := map[string]json.RawMessage{}
	path := groupVersionPath(kind.APIVersion()) + "/" + kind.Plural
	cont := ""
	for {
		var body []byte
		err := c.doOnce(ctx, "list", kind, "", "", func(ctx context.Context) error {
			req := c.raw.Get().AbsPath(path).Param("limit", strconv.Itoa(snapshotPageSize))
			if cont != "" {
				req = req.Param("continue", cont)
			}
			var err error
			body, err = req.Do(ctx).Raw()
			return err
		})
		if err != nil {
			return nil, &OpError{Cluster: c.DisplayName(), Verb: "list", Kind: kind, Err: err}
		}
		var page struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, err
		}
		for _, raw := range page.Items {
			key, err := listedKey(raw)
			if err != nil {
				return nil, err
			}
			items[key] = raw
		}
		if cont = page.Metadata.Continue; cont == "" {
			return items, nil
		}
	}
}

// listedKey is "namespace/name" of item, one item of a LIST page (valid
// JSON), read in place where the API server writes them as plain strings:
// decoding the item for two strings scanned all of it through reflection,
// a second decode of every object besides DecodeListItem's. Anything else
// is decoded.
func listedKey(item []byte) (string, error) {
	var name, namespace []byte
	eachMember(item, skipSpace(item, 0), func(key []byte, m member) bool {
		if string(key) == "metadata" {
			// A second metadata overrides what it gives, as in a decode.
			eachMember(item, m.value.start, func(key []byte, m member) bool {
				switch string(key) {
				case "name":
					name = item[m.value.start:m.value.end]
				case "namespace":
					namespace = item[m.value.start:m.value.end]
				}
				return true
			})
		}
		return true
	})
	n, plainName := plainString(name)
	ns, plainNamespace := plainString(namespace)
	if plainName && (plainNamespace || namespace == nil) {
		return ns + "/" + n, nil
	}
	var meta struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(item, &meta); err != nil {
		return "", err
	}
	return meta.Metadata.Namespace + "/" + meta.Metadata.Name, nil
}

// plainString is the JSON string value, if it is one without escapes.
func plainString(value []byte) (string, bool) {
	if len(value) < 2 || value[0] != '"' || value[len(value)-1] != '"' || bytes.IndexByte(value, '\\') >= 0 {
		return "", false
	}
	return string(value[1 : len(value)-1]), true
}
