package standin

// The ZTWIM stand-in's configuration step: the JWT issuer check and the
// server.conf it renders (ztwim.go runs both in its reconcile).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ZTWIMRender is one server.conf the stand-in rendered: what the SPIRE
// server would run with after the rollout it triggers.
type ZTWIMRender struct {
	At time.Time
	// Peers are the trust domains of server.federation.federates_with, sorted.
	Peers []string
}

// Renders returns every server.conf rendered since the stand-in started,
// oldest first.
func (s *ZTWIM) Renders() []ZTWIMRender {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ZTWIMRender(nil), s.renders...)
}

// ztwimValidURL is utils.IsValidURL (url_validation.go): it parses, with
// an http or https scheme, a host, and no query or fragment. The CRD's
// pattern lets through what does not parse, such as a port that is not a
// number.
func ztwimValidURL(raw string) error {
	if raw == "" {
		return errors.New("issuer URL cannot be empty")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("invalid URL format: %w", err)
	case u.Scheme == "":
		return errors.New("scheme is required")
	case !strings.EqualFold(u.Scheme, "https") && !strings.EqualFold(u.Scheme, "http"):
		return fmt.Errorf("scheme must be http or https, got: %s", u.Scheme)
	case u.Host == "":
		return errors.New("host is required")
	case u.Fragment != "":
		return errors.New("fragments are not allowed")
	case u.RawQuery != "":
		return errors.New("query parameters are not allowed")
	}
	return nil
}

// renderServerConf writes server.conf into the ConfigMap spire-server as
// configmap.go generateServerConfMap renders it (only the trust domain,
// the JWT issuer and the federation here) and keeps it in s.renders.
func (s *ZTWIM) renderServerConf(ctx context.Context, trustDomain, jwtIssuer string, fed map[string]any) error {
	server := map[string]any{"trust_domain": trustDomain, "jwt_issuer": jwtIssuer}
	var peers []string
	if fed != nil {
		federation := map[string]any{}
		be, _, _ := unstructured.NestedMap(fed, "bundleEndpoint")
		profile := map[string]any{"https_spiffe": map[string]any{}}
		if ztwimString(be, "profile") == "https_web" {
			profile = map[string]any{"https_web": map[string]any{}}
		}
		refresh, found, _ := unstructured.NestedInt64(be, "refreshHint")
		if !found {
			refresh = 300
		}
		federation["bundle_endpoint"] = map[string]any{
			"address": "0.0.0.0", "port": int64(8443), "profile": profile, "refresh_hint": fmt.Sprintf("%ds", refresh),
		}
		with := map[string]any{}
		items, _, _ := unstructured.NestedSlice(fed, "federatesWith")
		for _, item := range items {
			p, _ := item.(map[string]any)
			td := ztwimString(p, "trustDomain")
			peerProfile := map[string]any{"https_web": map[string]any{}}
			if ztwimString(p, "bundleEndpointProfile") == "https_spiffe" {
				peerProfile = map[string]any{"https_spiffe": map[string]any{"endpoint_spiffe_id": ztwimString(p, "endpointSpiffeId")}}
			}
			with[td] = map[string]any{"bundle_endpoint_url": ztwimString(p, "bundleEndpointUrl"), "bundle_endpoint_profile": peerProfile}
			peers = append(peers, td)
		}
		if len(with) > 0 {
			federation["federates_with"] = with
		}
		server["federation"] = federation
	}
	conf, err := json.MarshalIndent(map[string]any{"server": server}, "", "    ")
	if err != nil {
		return err
	}
	cms := s.dyn.Resource(configMapGVR).Namespace(ZTWIMRouteNamespace)
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": ZTWIMServerConfigMap, "namespace": ZTWIMRouteNamespace,
			"labels": map[string]any{ZTWIMManagedByLabel: ZTWIMManagedByValue}},
		"data": map[string]any{"server.conf": string(conf)},
	}}
	cur, err := cms.Get(ctx, ZTWIMServerConfigMap, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{FieldManager: ztwimStandInManager})
	case err == nil:
		cur.Object["data"] = cm.Object["data"]
		_, err = cms.Update(ctx, cur, metav1.UpdateOptions{FieldManager: ztwimStandInManager})
	}
	if err != nil {
		return err
	}
	sort.Strings(peers)
	s.mu.Lock()
	s.renders = append(s.renders, ZTWIMRender{At: time.Now(), Peers: peers})
	s.mu.Unlock()
	return nil
}
