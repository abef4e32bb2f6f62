package examplestest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// exampleWithout is examples/<dir>/main.tf without its terraform block and
// the blocks of the other types drop, for the tests that apply an example
// in-process (resource.Test) rather than with the CLI: the in-process
// provider does not answer to the terraform block's registry source.
// Everything else is applied as written.
func exampleWithout(t *testing.T, dir string, drop ...string) string {
	t.Helper()
	file := filepath.Join(repoRoot(t), "examples", dir, "main.tf")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	f, diags := hclwrite.ParseConfig(src, file, hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("%s: %s", file, diags)
	}
	found := false
	for _, block := range f.Body().Blocks() {
		switch {
		case block.Type() == "terraform":
			f.Body().RemoveBlock(block)
			found = true
		case slices.Contains(drop, block.Type()):
			f.Body().RemoveBlock(block)
		}
	}
	if !found {
		t.Fatalf("%s has no terraform block to replace", file)
	}
	return string(f.Bytes())
}
