//go:build tools

// Package tools pins terraform v1.11 (the oldest tested) for scripts/tool.sh, which builds it into a cache
// outside the clone. This file is never compiled; it only keeps the main
// package (and so its dependencies) in this module's go.mod and go.sum.
package tools

import (
	_ "github.com/hashicorp/terraform"
)
