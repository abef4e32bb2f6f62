//go:build tools

// Package tools pins OpenTofu for scripts/tool.sh, which builds it into a
// cache outside the clone (scripts/examples-check.sh validates the OpenTofu
// examples with it). This file is never compiled; it only keeps the main
// package (and so its dependencies) in this module's go.mod and go.sum.
package tools

import (
	_ "github.com/opentofu/opentofu/cmd/tofu"
)
