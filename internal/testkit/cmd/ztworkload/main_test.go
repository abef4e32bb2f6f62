package main

import (
	"testing"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
)

func TestAuthorizer(t *testing.T) {
	allow, err := authorizer("spiffe://west.zt.test/workload/app, spiffe://north.zt.test")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{
		"spiffe://west.zt.test/workload/app":   true,
		"spiffe://west.zt.test/workload/other": false,
		"spiffe://north.zt.test/anything":      true,
		"spiffe://east.zt.test/workload/app":   false,
	} {
		if got := allow(spiffeid.RequireFromString(id), nil) == nil; got != want {
			t.Errorf("authorizer(%s) allowed = %v, want %v", id, got, want)
		}
	}
	if _, err := authorizer("west.zt.test/app"); err == nil {
		t.Error("authorizer accepted an ID without the spiffe scheme")
	}
}
