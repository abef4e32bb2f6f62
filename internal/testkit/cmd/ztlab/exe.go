package main

import (
	"io"
	"os"
	"path/filepath"
)

// stableExecutable returns a path of this program that stays valid while the
// lab runs: the program itself when it already lives in binDir, else a copy
// there (`go run` deletes its build when ztlab exits, and a rebuild should
// not change what running exec endpoints are).
func stableExecutable(binDir string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", err
	}
	dst := filepath.Join(binDir, "ztlab")
	if exe == dst {
		return dst, nil
	}
	src, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer src.Close()
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return "", err
	}
	// Copy, then rename: a running copy's file is replaced, never rewritten.
	tmp, err := os.CreateTemp(binDir, ".ztlab-")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return dst, os.Rename(tmp.Name(), dst)
}
