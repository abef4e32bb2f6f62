// Command ztworkload is the small workload behind harness.Workload: it gets
// its X.509-SVID and trust bundles (its own and the federated ones the
// registration entry names) from a SPIRE agent's Workload API, as go-spiffe
// workloads do, and proves with one mTLS handshake that two workloads trust
// each other.
//
//	ztworkload serve -socket S -addr 127.0.0.1:0 -allow spiffe://td/path,... [-addr-file F]
//	ztworkload dial  -socket S -addr HOST:PORT  -allow spiffe://td/path,... [-timeout 10s]
//	ztworkload show  -socket S [-timeout 10s]
//
// serve accepts mTLS connections from the allowed SPIFFE IDs (an ID without
// a path allows every workload of that trust domain), greets each with
// "hello <peer ID>" and logs every handshake on stdout; once it listens it
// writes its address to -addr-file. dial does one handshake, reads the
// greeting (in TLS 1.3 the server refuses a client certificate only after the
// client's handshake has finished, so only the greeting proves both sides
// agreed), prints "ok <server ID>: <greeting>" and exits 0, or prints the
// error and exits 1. show prints, as JSON, which authority signed the SVID
// the agent hands this workload and which authorities each bundle it holds
// has: what a CA rotation changes, seen from the workload. Exit code 2 means
// bad usage.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"github.com/spiffe/go-spiffe/v2/spiffetls/tlsconfig"
	"github.com/spiffe/go-spiffe/v2/svid/x509svid"
	"github.com/spiffe/go-spiffe/v2/workloadapi"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "dial":
		err = dial(os.Args[2:])
	case "show":
		err = show(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: ztworkload serve|dial -socket PATH -addr HOST:PORT -allow spiffe://...[,spiffe://...]\n"+
		"       ztworkload show -socket PATH")
	os.Exit(2)
}

type options struct {
	socket, addr, addrFile string
	allow                  tlsconfig.Authorizer
	allowText              string
	timeout                time.Duration
}

func parse(name string, args []string) options {
	var o options
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	fs.StringVar(&o.socket, "socket", "", "the SPIRE agent's Workload API socket (required)")
	fs.StringVar(&o.addr, "addr", "", "address to listen on (serve) or connect to (dial) (required)")
	fs.StringVar(&o.allowText, "allow", "", "comma-separated SPIFFE IDs the peer may have; an ID without a path allows its whole trust domain (required)")
	fs.StringVar(&o.addrFile, "addr-file", "", "serve: write the listening address here once ready")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "dial: how long the Workload API and the handshake may take; serve: how long the first SVID may take")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 || o.socket == "" || o.addr == "" || o.allowText == "" {
		fs.Usage()
		os.Exit(2)
	}
	allow, err := authorizer(o.allowText)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ztworkload:", err)
		os.Exit(2)
	}
	o.allow = allow
	return o
}

// authorizer accepts a peer whose ID is one of the listed IDs or belongs to
// one of the listed trust domains.
func authorizer(list string) (tlsconfig.Authorizer, error) {
	var ids []spiffeid.ID
	var tds []spiffeid.TrustDomain
	for _, s := range strings.Split(list, ",") {
		id, err := spiffeid.FromString(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("-allow %q: %w", s, err)
		}
		if id.Path() == "" {
			tds = append(tds, id.TrustDomain())
		} else {
			ids = append(ids, id)
		}
	}
	byID := tlsconfig.AuthorizeOneOf(ids...)
	return func(id spiffeid.ID, chains [][]*x509.Certificate) error {
		for _, td := range tds {
			if id.MemberOf(td) {
				return nil
			}
		}
		if err := byID(id, chains); err != nil {
			return fmt.Errorf("peer %s is not allowed (-allow %s)", id, list)
		}
		return nil
	}, nil
}

func source(ctx context.Context, socket string, timeout time.Duration) (*workloadapi.X509Source, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	src, err := workloadapi.NewX509Source(ctx, workloadapi.WithClientOptions(workloadapi.WithAddr("unix://"+socket)))
	if err != nil {
		return nil, fmt.Errorf("no X.509-SVID from the Workload API at %s within %v: %w", socket, timeout, err)
	}
	return src, nil
}

func serve(args []string) error {
	o := parse("serve", args)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	src, err := source(ctx, o.socket, o.timeout)
	if err != nil {
		return err
	}
	defer src.Close()
	svid, err := src.GetX509SVID()
	if err != nil {
		return err
	}
	l, err := tls.Listen("tcp", o.addr, tlsconfig.MTLSServerConfig(src, src, o.allow))
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		l.Close()
	}()
	fmt.Printf("serving as %s on %s, allowing %s\n", svid.ID, l.Addr(), o.allowText)
	if o.addrFile != "" {
		// Written whole under another name and renamed: a reader never sees half an address.
		tmp := o.addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(l.Addr().String()+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, o.addrFile); err != nil {
			return err
		}
	}
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go greet(conn.(*tls.Conn)) //nolint:forcetypeassert // tls.Listen returns *tls.Conn
	}
}

func greet(conn *tls.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := conn.Handshake(); err != nil {
		fmt.Printf("handshake from %s failed: %v\n", conn.RemoteAddr(), err)
		return
	}
	peer := "(unknown)"
	if id, err := peerID(conn); err == nil {
		peer = id.String()
	}
	fmt.Printf("handshake from %s: %s\n", conn.RemoteAddr(), peer)
	_, _ = fmt.Fprintf(conn, "hello %s\n", peer)
}

func peerID(conn *tls.Conn) (spiffeid.ID, error) {
	certs := conn.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return spiffeid.ID{}, errors.New("no peer certificate")
	}
	return x509svid.IDFromCert(certs[0])
}

func dial(args []string) error {
	o := parse("dial", args)
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	src, err := source(ctx, o.socket, o.timeout)
	if err != nil {
		return err
	}
	defer src.Close()
	d := tls.Dialer{Config: tlsconfig.MTLSClientConfig(src, src, o.allow)}
	c, err := d.DialContext(ctx, "tcp", o.addr)
	if err != nil {
		return fmt.Errorf("handshake with %s: %w", o.addr, err)
	}
	conn := c.(*tls.Conn) //nolint:forcetypeassert // tls.Dialer returns *tls.Conn
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	server, err := peerID(conn)
	if err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("connection closed without a greeting")
		}
		return fmt.Errorf("server %s refused us after the handshake: %w", server, err)
	}
	fmt.Printf("ok %s: %s\n", server, strings.TrimSpace(line))
	return nil
}

// shown is what show prints. Authorities are hex subject key IDs, as SPIRE's
// `localauthority` commands name them.
type shown struct {
	SPIFFEID      string              `json:"spiffe_id"`
	SVIDAuthority string              `json:"svid_authority"`
	SVIDExpiresAt time.Time           `json:"svid_expires_at"`
	Bundles       map[string][]string `json:"bundles"`
}

func show(args []string) error {
	fs := flag.NewFlagSet("show", flag.ExitOnError)
	socket := fs.String("socket", "", "the SPIRE agent's Workload API socket (required)")
	timeout := fs.Duration("timeout", 10*time.Second, "how long the Workload API may take")
	if err := fs.Parse(args); err != nil || fs.NArg() != 0 || *socket == "" {
		fs.Usage()
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	// One fetch, not a source: show reports a moment, it serves nothing.
	x509Ctx, err := workloadapi.FetchX509Context(ctx, workloadapi.WithAddr("unix://"+*socket))
	if err != nil {
		return fmt.Errorf("no X.509 context from the Workload API at %s within %v: %w", *socket, *timeout, err)
	}
	svid := x509Ctx.DefaultSVID()
	leaf := svid.Certificates[0]
	out := shown{
		SPIFFEID: svid.ID.String(), SVIDAuthority: hex.EncodeToString(leaf.AuthorityKeyId),
		SVIDExpiresAt: leaf.NotAfter.UTC(), Bundles: map[string][]string{},
	}
	for _, b := range x509Ctx.Bundles.Bundles() {
		ids := []string{}
		for _, a := range b.X509Authorities() {
			ids = append(ids, hex.EncodeToString(a.SubjectKeyId))
		}
		out.Bundles[b.TrustDomain().Name()] = ids
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
