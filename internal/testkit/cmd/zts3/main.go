// Command zts3 is the test harness's object storage (harness.StartS3): an
// S3-compatible server on loopback, built on gofakes3, that SPIRE's real
// `aws_s3` BundlePublisher writes trust bundles to and peers' SPIRE servers
// read them from with the `https_web` profile.
//
//	zts3 -listen 127.0.0.1:PORT -cert CERT -key KEY -db FILE -bucket NAME...
//
// It serves HTTPS only, with the certificate given (from a lab CA that the
// SPIRE servers trust), and path-style URLs: an object is at
// https://127.0.0.1:PORT/BUCKET/KEY. Objects live in a bbolt file, so a
// restart (the harness stopping the server to play a bucket outage) keeps
// them: SPIRE publishes again only when its bundle changes, so a bucket that
// forgot its objects would stay empty. The buckets named are created when
// missing. Like every gofakes3 server it checks no signature: a GET without
// credentials reads an object, as a bucket policy granting public reads
// allows.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
	bolt "go.etcd.io/bbolt"
)

type bucketList []string

func (b *bucketList) String() string     { return strings.Join(*b, ",") }
func (b *bucketList) Set(v string) error { *b = append(*b, v); return nil }

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	cert := flag.String("cert", "", "PEM serving certificate")
	key := flag.String("key", "", "PEM key of the serving certificate")
	db := flag.String("db", "", "bbolt file holding the objects")
	var buckets bucketList
	flag.Var(&buckets, "bucket", "bucket to create when missing (repeatable)")
	flag.Parse()
	if err := run(*listen, *cert, *key, *db, buckets); err != nil {
		log.Fatalf("zts3: %v", err)
	}
}

func run(listen, certFile, keyFile, db string, buckets []string) error {
	if certFile == "" || keyFile == "" || db == "" {
		return errors.New("-cert, -key and -db are required")
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return err
	}
	// A lock held by a server that is still stopping is waited for, not
	// failed on.
	bdb, err := bolt.Open(db, 0o600, &bolt.Options{Timeout: 10 * time.Second})
	if err != nil {
		return fmt.Errorf("opening %s: %w", db, err)
	}
	defer bdb.Close()
	backend := s3bolt.New(bdb)
	for _, b := range buckets {
		if err := backend.CreateBucket(b); err != nil && !gofakes3.HasErrorCode(err, gofakes3.ErrBucketAlreadyExists) {
			return fmt.Errorf("creating bucket %s: %w", b, err)
		}
	}
	faker := gofakes3.New(backend, gofakes3.WithLogger(gofakes3.StdLog(log.Default(), gofakes3.LogErr, gofakes3.LogWarn, gofakes3.LogInfo)))
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           logRequests(decodeUnsignedChunks(faker.Server())),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("zts3: serving https://%s/ (buckets %v, objects in %s)", ln.Addr(), buckets, db)
	if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// logRequests logs every request with its answer's status, so the lab's log
// shows when SPIRE published and when peers fetched.
func logRequests(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		log.Printf("%s %s %s -> %d", r.RemoteAddr, r.Method, r.URL.Path, rec.status)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
