//go:build tools

// Package tools pins spire-agent for scripts/tool.sh, which builds it into a cache
// outside the clone. This file is never compiled; it only keeps the main
// package (and so its dependencies) in this module's go.mod and go.sum.
// The spire version must be the one tools/spire-server pins: the agent talks
// to that server, and scripts/tool.sh refuses to build a mismatch.
package tools

import (
	_ "github.com/spiffe/spire/cmd/spire-agent"
)
