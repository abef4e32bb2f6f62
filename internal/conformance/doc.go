// Package conformance has no production code. Its tests hold the provider's
// resource schemas against the CustomResourceDefinitions the operators
// publish (as the harness installs them, internal/testkit/harness/crds.go): every field a resource writes exists
// there with a compatible type, the plan-time validation accepts exactly what
// the CRD accepts (enums and bounds), and every CEL transition rule
// (immutability) is mirrored by a replacement or a plan-time error.
//
// The mapping tables (one file per resource) are the reviewed contract
// between an attribute and the CRD field it becomes; the test fails when a
// schema gains an attribute the table does not place, or the CRD a rule the
// table does not answer.
package conformance
