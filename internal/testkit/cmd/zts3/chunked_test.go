package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The body the AWS SDK for Go v2 sent for SPIRE's PutObject (shortened),
// and what the object must hold.
func TestDecodeUnsignedChunks(t *testing.T) {
	body := "b\r\n{\"keys\":[]}\r\n5;ext=1\r\n\n\t  x\r\n0\r\nx-amz-checksum-crc32:MHrRvw==\r\n\r\n"
	want := "{\"keys\":[]}\n\t  x"
	var got, encoding, length string
	h := decodeUnsignedChunks(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, encoding, length = string(b), r.Header.Get("Content-Encoding"), r.Header.Get("Content-Length")
	}))
	req := httptest.NewRequest(http.MethodPut, "https://127.0.0.1/b/k", strings.NewReader(body))
	req.Header.Set("X-Amz-Content-Sha256", unsignedTrailer)
	req.Header.Set("Content-Encoding", "aws-chunked")
	req.Header.Set("X-Amz-Decoded-Content-Length", "16")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || got != want || encoding != "" || length != "16" {
		t.Fatalf("status %d, body %q (want %q), Content-Encoding %q, Content-Length %q", rec.Code, got, want, encoding, length)
	}

	for name, bad := range map[string]string{
		"size not hex":      "zz\r\nabc\r\n0\r\n\r\n",
		"chunk cut short":   "10\r\nabc",
		"no CRLF":           "3\r\nabcd\r\n0\r\n\r\n",
		"no end":            "3\r\nabc\r\n",
		"length mismatched": "3\r\nabc\r\n0\r\n\r\n",
	} {
		req := httptest.NewRequest(http.MethodPut, "https://127.0.0.1/b/k", strings.NewReader(bad))
		req.Header.Set("X-Amz-Content-Sha256", unsignedTrailer)
		req.Header.Set("X-Amz-Decoded-Content-Length", "16")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", name, rec.Code)
		}
	}
}
