package kube

import (
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
func (c *Client) GetForRefresh(ctx context.Context, kind Kind, namespace, name string) (*unstructured.Unstructured, error) {
	s := c.snapshotOf(kind)
	if s.reads.Add(1) <= refreshSnapshotAfter {
		return c.Get(ctx, kind, namespace, name)
	}
	s.once.Do(func() { s.items, s.err = c.listRaw(ctx, kind) })
	if s.err != nil {
		return c.Get(ctx, kind, namespace, name)
	}
	key := namespace + "/" + name
	s.mu.Lock()
	raw, ok := s.items[key]
	// Each object is served once: a second read in the same walk asks the
	// API server, and the memory goes as the walk proceeds.
	delete(s.items, key)
	s.mu.Unlock()
	if !ok {
		return c.Get(ctx, kind, namespace, name)
	}
	obj, err := DecodeListItem(raw, kind)
	if err != nil {
		return c.Get(ctx, kind, namespace, name)
	}
	return obj, nil
}

// DecodeListItem decodes one item of a LIST of kind as GetForRefresh serves
// it.
func DecodeListItem(raw []byte, kind Kind) (*unstructured.Unstructured, error) {
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	// List items of built-in kinds omit these; custom resources carry them.
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
		obj.SetAPIVersion(kind.APIVersion())
		obj.SetKind(kind.Kind)
	}
	return obj, nil
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
			var meta struct {
				Metadata struct {
					Name      string `json:"name"`
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(raw, &meta); err != nil {
				return nil, err
			}
			items[meta.Metadata.Namespace+"/"+meta.Metadata.Name] = raw
		}
		if cont = page.Metadata.Continue; cont == "" {
			return items, nil
		}
	}
}
