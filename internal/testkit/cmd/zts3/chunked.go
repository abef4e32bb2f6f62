package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// unsignedTrailer is the x-amz-content-sha256 of an upload in aws-chunked
// encoding with unsigned chunks and trailing checksums: what the AWS SDK for
// Go v2 sends for PutObject over HTTPS since it computes checksums by
// default (SPIRE's aws_s3 BundlePublisher among its callers). gofakes3
// v1.2.0 decodes only signed chunks and would store the chunk framing as
// the object, so zts3 decodes these bodies, as S3 does, before gofakes3
// sees them.
const unsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"

// maxUpload bounds a decoded body; bundles are a few KiB.
const maxUpload = 16 << 20

// decodeUnsignedChunks hands h requests whose body was aws-chunked with
// unsigned chunks as plain uploads of the decoded bytes.
func decodeUnsignedChunks(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Content-Sha256") != unsignedTrailer {
			h.ServeHTTP(w, r)
			return
		}
		body, err := readUnsignedChunks(io.LimitReader(r.Body, maxUpload))
		r.Body.Close()
		if err != nil {
			http.Error(w, "zts3: aws-chunked body: "+err.Error(), http.StatusBadRequest)
			return
		}
		if want := r.Header.Get("X-Amz-Decoded-Content-Length"); want != "" && want != strconv.Itoa(len(body)) {
			http.Error(w, fmt.Sprintf("zts3: aws-chunked body of %d bytes, x-amz-decoded-content-length %s", len(body), want), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
		r.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
		for _, k := range []string{"X-Amz-Decoded-Content-Length", "X-Amz-Trailer"} {
			r.Header.Del(k)
		}
		// aws-chunked describes the upload, not the object: S3 does not
		// store it, and a GET must not announce it.
		var encodings []string
		for _, e := range strings.Split(r.Header.Get("Content-Encoding"), ",") {
			if e = strings.TrimSpace(e); e != "" && e != "aws-chunked" {
				encodings = append(encodings, e)
			}
		}
		r.Header.Del("Content-Encoding")
		if len(encodings) > 0 {
			r.Header.Set("Content-Encoding", strings.Join(encodings, ","))
		}
		h.ServeHTTP(w, r)
	})
}

// readUnsignedChunks reads an aws-chunked body of unsigned chunks: lines
// "<hex size>[;extensions]" each followed by that many bytes and CRLF, a
// chunk of size 0, then trailer lines (checksums, not checked here) up to
// an empty line.
func readUnsignedChunks(r io.Reader) ([]byte, error) {
	br := bufio.NewReader(r)
	var out bytes.Buffer
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("reading a chunk size: %w", err)
		}
		sizeHex, _, _ := strings.Cut(strings.TrimRight(line, "\r\n"), ";")
		size, err := strconv.ParseInt(strings.TrimSpace(sizeHex), 16, 64)
		if err != nil || size < 0 {
			return nil, fmt.Errorf("chunk size %q", line)
		}
		if size == 0 {
			break
		}
		if _, err := io.CopyN(&out, br, size); err != nil {
			return nil, fmt.Errorf("reading a chunk of %d bytes: %w", size, err)
		}
		if crlf, err := br.ReadString('\n'); err != nil || strings.TrimRight(crlf, "\r\n") != "" {
			return nil, fmt.Errorf("no CRLF after a chunk of %d bytes", size)
		}
	}
	for {
		line, err := br.ReadString('\n')
		if strings.TrimRight(line, "\r\n") == "" {
			return out.Bytes(), nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the trailer: %w", err)
		}
	}
}
