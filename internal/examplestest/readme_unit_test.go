package examplestest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// docSnippetDirs are the directories under examples/ that hold the
// fragments the generated docs embed, not configurations a user runs.
var docSnippetDirs = []string{"resources", "data-sources", "actions", "functions", "list-resources", "provider", "rbac"}

// exampleVariable is a variable block of an example.
type exampleVariable struct {
	name                string
	optional, sensitive bool
}

// exampleVariables reads the variable blocks of the .tf files in dir.
func exampleVariables(t *testing.T, dir string) []exampleVariable {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		t.Fatal(err)
	}
	var vars []exampleVariable
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f, diags := hclwrite.ParseConfig(src, file, hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", file, diags)
		}
		for _, b := range f.Body().Blocks() {
			if b.Type() == "variable" && len(b.Labels()) == 1 {
				vars = append(vars, exampleVariable{
					name:      b.Labels()[0],
					optional:  b.Body().GetAttribute("default") != nil,
					sensitive: b.Body().GetAttribute("sensitive") != nil,
				})
			}
		}
	}
	return vars
}

// exampleDirs are the example directories a user runs or calls (relative to
// examples/): every directory with .tf files outside the doc snippets.
func exampleDirs(t *testing.T) []string {
	t.Helper()
	root := filepath.Join(repoRoot(t), "examples")
	var dirs []string
	err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if e.IsDir() && (slices.Contains(docSnippetDirs, rel) || e.Name() == ".terraform") {
			return filepath.SkipDir
		}
		if !e.IsDir() && strings.HasSuffix(path, ".tf") && !slices.Contains(dirs, filepath.Dir(rel)) {
			dirs = append(dirs, filepath.Dir(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

var readmeJSON = regexp.MustCompile("(?s)```json\n(.*?)```")

// TestExampleReadmes: every example directory has a README.md naming each
// of its variables. A root configuration (outside examples/modules) also
// ships a terraform.tfvars.json that sets only variables it declares and
// every one it requires (a sensitive one may come from the environment), and
// its README shows that file as its sample. That the values also pass the
// variables' types and validation rules is scripts/examples-check.sh's job
// (terraform console with the file).
func TestExampleReadmes(t *testing.T) {
	dirs := exampleDirs(t)
	if len(dirs) < 10 {
		t.Fatalf("found only %d example directories: %v", len(dirs), dirs)
	}
	for _, rel := range dirs {
		t.Run(rel, func(t *testing.T) {
			dir := filepath.Join(repoRoot(t), "examples", rel)
			readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
			if err != nil {
				t.Fatalf("examples/%s has no README.md: %v", rel, err)
			}
			vars := exampleVariables(t, dir)
			for _, v := range vars {
				if !strings.Contains(string(readme), "`"+v.name+"`") {
					t.Errorf("examples/%s/README.md does not name the variable `%s`", rel, v.name)
				}
			}
			if strings.HasPrefix(rel, "modules"+string(filepath.Separator)) {
				return
			}
			sample, err := os.ReadFile(filepath.Join(dir, "terraform.tfvars.json"))
			if err != nil {
				t.Fatalf("examples/%s has no sample terraform.tfvars.json: %v", rel, err)
			}
			var values map[string]any
			if err := json.Unmarshal(sample, &values); err != nil {
				t.Fatalf("examples/%s/terraform.tfvars.json: %v", rel, err)
			}
			for name := range values {
				if !slices.ContainsFunc(vars, func(v exampleVariable) bool { return v.name == name }) {
					t.Errorf("examples/%s/terraform.tfvars.json sets %q, which the example does not declare", rel, name)
				}
			}
			for _, v := range vars {
				if _, ok := values[v.name]; !ok && !v.optional && !v.sensitive {
					t.Errorf("examples/%s/terraform.tfvars.json does not set the required variable %q", rel, v.name)
				}
			}
			m := readmeJSON.FindSubmatch(readme)
			if m == nil {
				t.Fatalf("examples/%s/README.md shows no sample terraform.tfvars.json (a ```json block)", rel)
			}
			var shown map[string]any
			if err := json.Unmarshal(m[1], &shown); err != nil {
				t.Fatalf("examples/%s/README.md: its sample is not JSON: %v", rel, err)
			}
			if !reflect.DeepEqual(shown, values) {
				t.Errorf("examples/%s/README.md shows a sample other than its terraform.tfvars.json:\n%s", rel, m[1])
			}
		})
	}
}
