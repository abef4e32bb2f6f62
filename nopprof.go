//go:build !pprof

package main

// startProfiles does nothing: profiling (ZT_PPROF_DIR) is compiled in only
// with `-tags pprof` (see pprof.go), so the release binary carries none of it.
func startProfiles() (stop func()) { return func() {} }
