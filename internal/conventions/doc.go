// Package conventions has no production code. Its tests hold the rules of
// the repository's own text and layout that no compiler or linter checks:
//
//   - Comments and documentation are self-contained: they state a fact
//     instead of pointing at where it was discussed (planning notes outside
//     the repository, their row IDs, issue or seed numbers, numbered style
//     habits) or at a path on one developer's machine. An upstream issue is
//     named with its repository (owner/name#number), and the operators'
//     rules the code follows are in docs/guides/operator-contracts.md,
//     rendered from templates/guides/operator-contracts.md.tmpl.
//   - Test file names say which make target runs the tests: in a package
//     with acceptance tests (TestAcc*, `make testacc`), a file holding only
//     unit tests (`make unit`) ends in _unit_test.go; _test.go files hold
//     acceptance tests and shared test helpers; a package without
//     acceptance tests names its test files _test.go.
//   - A helper lives where a reader looks for it: a name declared at the
//     top level of one resource's files of internal/resources
//     (<name>_*.go, <name> a registered type name, the longest that
//     matches), whether function, constant, variable or type, exported or
//     not, is used by that resource's files only (registry.go registers
//     the exported constructors); one that a second resource or a shared
//     file needs lives in a shared file that internal/resources/doc.go
//     names.
//   - One resource shape: a type of internal/resources that embeds the
//     skeleton (kubeResource) declares none of the methods it serves, its
//     Create, Update and ModifyPlan start from the skeleton's prologues,
//     and every plan-time check reaches its cluster through planLookup.
//   - A figure the CHANGELOG, the provider docs or bench/ANALYSIS.md state
//     as current for a tunable (GOGC, qps, burst, timeouts) is the code's
//     constant; a GOGC figure other than the code's reads as history.
//   - Test tooling stays out of the provider: the binary built from the
//     repository root links no package under internal/testkit and no
//     operator stand-in (internal/standin).
//   - Tests start labs in one place: only acctest.LabFor (labs.go) calls
//     harness.Start, under whatever name a file imports the harness, so
//     every lab has one start timeout and one stop.
//   - A Go file that is not a test has at most 550 lines (test tooling and
//     bench/ too: the bound is about reading); past it, it is split by
//     concern.
//
// CHANGELOG.md is prose like any other: its entries are read by users, who
// have no more of the planning notes than any other reader.
package conventions
