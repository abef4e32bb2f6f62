package protoserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexStatesTheGCTarget: the provider's index page says which GOGC the
// provider runs with when its environment sets none, from gcPercent.
func TestIndexStatesTheGCTarget(t *testing.T) {
	tmpl, err := os.ReadFile(filepath.Join("..", "..", "templates", "index.md.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("(`GOGC=%d` unless set)", gcPercent); !strings.Contains(string(tmpl), want) {
		t.Errorf("templates/index.md.tmpl does not say %q", want)
	}
}
