package standin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/ztfabric/terraform-provider-zerotrust/internal/dnscheck"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/domainverification"
	"github.com/ztfabric/terraform-provider-zerotrust/internal/kube"
)

// The DomainVerification stand-in plays Kuadrant's DomainVerification
// controller, which cannot run here. Like the real one it works only through
// the API server: it issues a token into status.token of each
// DomainVerification, and it sets verified only after it has itself looked up
// the TXT record at spec.domain over DNS (with internal/dnscheck, asking every
// nameserver it was given directly) and found the token on all of them. A record
// removed later makes it unverified again. It writes status in the shape of
// the API version the object was created with (v1: verified, lastChecked,
// nextCheck, message; v1alpha1: a Verified condition for spec.domain, with
// `domain` and `nextVerification`, leaving the conditions of other domains
// as they are).
//
// It handles only objects whose domain lies in the zones it was given, so
// other tests can create objects that no controller answers.

const (
	dvStandInTick      = 250 * time.Millisecond
	dvStandInRecheck   = 500 * time.Millisecond
	dvStandInRefresh   = 10 * time.Second // rewrite lastChecked at least this often
	dvStandInFieldMgr  = "kuadrant-standin"
	dvStandInReasonOK  = "Verified"
	dvStandInReasonBad = "RecordNotFound"
)

// DomainVerificationDeps is what the DomainVerification stand-in works
// through.
type DomainVerificationDeps struct {
	// Dynamic talks to the cluster the stand-in serves.
	Dynamic dynamic.Interface
	// Nameservers are the authoritative servers (host:port) asked for the
	// TXT records, every one of them directly.
	Nameservers []string
	// Zones are the DNS zones whose domains the stand-in handles.
	Zones []string
}

// StartDomainVerification starts the stand-in DomainVerification
// controller on the cluster deps.Dynamic talks to; it runs until stop is
// called or ctx ends.
func StartDomainVerification(ctx context.Context, deps DomainVerificationDeps) (c *DomainVerification, stop func(), err error) {
	c = &DomainVerification{
		dyn: deps.Dynamic,
		dns: dnscheck.New(dnscheck.Options{
			Nameservers: deps.Nameservers, Timeout: time.Second, Attempts: 2, Backoff: 50 * time.Millisecond,
		}),
		zones:   deps.Zones,
		checked: map[types.UID]time.Time{},
		written: map[types.UID]time.Time{},
	}
	return c, run(ctx, dvStandInTick, c.reconcileAll), nil
}

// DomainVerification is a running DomainVerification stand-in
// (StartDomainVerification).
type DomainVerification struct {
	dyn     dynamic.Interface
	dns     *dnscheck.Checker
	zones   []string
	checked map[types.UID]time.Time // last DNS check per object
	written map[types.UID]time.Time // last status write per object
}

func (c *DomainVerification) reconcileAll(ctx context.Context) {
	list, err := c.dyn.Resource(kube.DomainVerificationV1.GVR()).List(ctx, metav1.ListOptions{})
	if err != nil {
		return // the API server may be busy; the next tick retries
	}
	for i := range list.Items {
		obj := &list.Items[i]
		if c.ours(domainverification.Domain(obj)) && obj.GetDeletionTimestamp() == nil {
			c.reconcile(ctx, obj)
		}
	}
}

func (c *DomainVerification) ours(domain string) bool {
	for _, z := range c.zones {
		if domain == z || strings.HasSuffix(domain, "."+z) {
			return true
		}
	}
	return false
}

func (c *DomainVerification) reconcile(ctx context.Context, obj *unstructured.Unstructured) {
	uid := obj.GetUID()
	version := domainverification.CreatedWith(obj)
	st := domainverification.StatusOf(obj)
	now := time.Now().UTC().Truncate(time.Second)

	if st.Token == "" {
		token := newToken()
		msg := fmt.Sprintf("publish a TXT record at %s holding the token", domainverification.Domain(obj))
		c.writeStatus(ctx, obj, version, token, false, msg, now)
		return
	}
	if time.Since(c.checked[uid]) < dvStandInRecheck {
		return
	}
	c.checked[uid] = time.Now()
	res, err := c.dns.LookupTXT(ctx, domainverification.Domain(obj))
	verified := err == nil && res.AllHave(st.Token)
	var msg string
	switch {
	case err != nil:
		msg = "DNS lookup failed: " + err.Error()
	case verified:
		msg = "TXT record found on every authoritative server"
	default:
		msg = "TXT record not found on every authoritative server: " + strings.ReplaceAll(res.Describe(""), "\n", "; ")
	}
	changed := st.Verified == nil || *st.Verified != verified || st.Message != msg
	if changed || time.Since(c.written[uid]) >= dvStandInRefresh {
		c.writeStatus(ctx, obj, version, st.Token, verified, msg, now)
	}
}

// writeStatus replaces status through the status subresource of the version
// the object was created with. A conflict (someone wrote in between) is left
// for the next tick.
func (c *DomainVerification) writeStatus(ctx context.Context, obj *unstructured.Unstructured, version, token string, verified bool, msg string, now time.Time) {
	kind := domainverification.Kind(version)
	out := obj.DeepCopy()
	out.SetAPIVersion(kind.APIVersion())
	stamp := now.Format(time.RFC3339)
	if version == domainverification.V1Alpha1 {
		status, reason := "False", dvStandInReasonBad
		if verified {
			status, reason = "True", dvStandInReasonOK
		}
		transition := stamp
		if prev := domainverification.StatusOf(obj); prev.Verified != nil && *prev.Verified == verified && prev.LastChecked != "" {
			transition = prev.LastChecked
		}
		domain := domainverification.Domain(obj)
		mine := map[string]any{
			"type": domainverification.ConditionVerified, "domain": domain, "status": status, "reason": reason,
			"message": msg, "lastTransitionTime": transition, "observedGeneration": obj.GetGeneration(),
			"nextVerification": now.Add(dvStandInRefresh).Format(time.RFC3339),
		}
		out.Object["status"] = map[string]any{"token": token, "conditions": withCondition(obj, domain, mine)}
	} else {
		out.Object["status"] = map[string]any{
			"token": token, "verified": verified, "message": msg,
			"lastChecked": stamp, "nextCheck": now.Add(dvStandInRefresh).Format(time.RFC3339),
		}
	}
	if _, err := c.dyn.Resource(kind.GVR()).UpdateStatus(ctx, out, metav1.UpdateOptions{FieldManager: dvStandInFieldMgr}); err == nil {
		c.written[obj.GetUID()] = time.Now()
	}
}

// withCondition is the object's conditions with the Verified condition of
// domain replaced by cond in place (appended when there is none): the
// v1alpha1 shape lists one Verified condition per domain, and those of other
// domains are not this check's to change.
func withCondition(obj *unstructured.Unstructured, domain string, cond map[string]any) []any {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	out := make([]any, 0, len(conditions)+1)
	replaced := false
	for _, c := range conditions {
		m, _ := c.(map[string]any)
		if d, _ := m["domain"].(string); m["type"] == domainverification.ConditionVerified && (d == domain || d == "") {
			if !replaced {
				out = append(out, cond)
				replaced = true
			}
			continue
		}
		out = append(out, c)
	}
	if !replaced {
		out = append(out, cond)
	}
	return out
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
