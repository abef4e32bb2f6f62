// Package standin holds the operator stand-ins: controllers that play, on a
// lab cluster, the part of an operator that cannot run there (it needs
// OpenShift, a real SPIRE deployment or a DNS provider), so that the
// provider's applies meet the same answers they meet in production.
//
// Each stand-in mirrors the real operator's published behaviour: it works
// only through the API server, as the operator does, and each of its rules
// names the controller function it follows (the operator's source at the
// release the provider targets). What it writes (status, conditions,
// finalizers, annotations, the objects it creates, the re-serialised spec of
// a full Update) is what the operator writes, so a test that passes against
// the stand-in tells something about the operator. It renders no more than
// the provider reads; each stand-in's file says what it leaves out.
//
//   - ZTWIM (ztwim*.go): the spire-server controller of the Zero Trust
//     Workload Identity Manager, for zerotrust_spire_federation.
//   - IstioCSR (istiocsr*.go): the istio-csr controller of the cert-manager
//     Operator for Red Hat OpenShift, with cert-manager and the kube
//     controllers for the objects it creates, for zerotrust_istio_csr.
//   - DomainVerification (domainverification.go): Kuadrant's
//     DomainVerification controller, checking TXT records over DNS.
//
// Where the provider mirrors the same controller, the stand-in is an
// independent oracle: it does not call the provider's code. The IstioCSR
// stand-in renders istiod's Certificate spec with its own
// istiodCertificateSpec (istiocsr_operands.go), never the resource's
// (internal/resources/istio_csr_operator.go), because the resource's apply
// compares the spec it expects with what the stand-in wrote, and one shared
// function would agree with itself when it is wrong.
//
// Every stand-in starts the same way: StartX(ctx, XDeps) returns the
// running stand-in and a stop function, or an error when it cannot start.
// Nothing here takes a testing.T: internal/acctest starts the stand-ins for
// acceptance tests (and stops them when the test binary is done), bench/
// on its mesh clusters. None of it is part of the provider binary.
package standin
