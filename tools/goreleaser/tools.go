//go:build tools

// Package tools pins goreleaser, which only make release-dry-run uses, for
// scripts/tool.sh, which builds it into a cache outside the clone. This file
// is never compiled; it only keeps the main package (and so its dependencies)
// in this module's go.mod and go.sum.
//
// The pin is v2.16.0: v2.18 needs Go >= 1.27.1, and v2.17 pulls in
// go.digitalxero.dev/go-msix (through nfpm's msix packager), a module host
// the project's build machines cannot reach. nfpm's tests still import it, so
// after changing the pin run `go mod tidy -e` here.
package tools

import (
	_ "github.com/goreleaser/goreleaser/v2"
)
