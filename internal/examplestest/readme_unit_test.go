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
// ships samples that set only variables it declares and every one it
// requires (a sensitive one may come from the environment): a
// terraform.tfvars.json, which its README shows, or .tfvars files its README
// names for the reader to copy (examples/quickstart: one per install; a
// terraform.tfvars.json beside them would override the copy). That the values also pass the
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
			samples := tfvarsSamples(t, dir)
			if len(samples) == 0 {
				t.Fatalf("examples/%s has no sample: a terraform.tfvars.json, or .tfvars files its README copies", rel)
			}
			for file, values := range samples {
				for name := range values {
					if !slices.ContainsFunc(vars, func(v exampleVariable) bool { return v.name == name }) {
						t.Errorf("examples/%s/%s sets %q, which the example does not declare", rel, file, name)
					}
				}
				for _, v := range vars {
					if _, ok := values[v.name]; !ok && !v.optional && !v.sensitive {
						t.Errorf("examples/%s/%s does not set the required variable %q", rel, file, v.name)
					}
				}
				if file != "terraform.tfvars.json" && !strings.Contains(string(readme), file) {
					t.Errorf("examples/%s/README.md does not name its sample %s", rel, file)
				}
			}
			values, ok := samples["terraform.tfvars.json"]
			if !ok {
				return
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

// tfvarsTopLevel is an assignment at the top level of a .tfvars file.
var tfvarsTopLevel = regexp.MustCompile(`(?m)^([A-Za-z_][A-Za-z0-9_-]*)\s*=`)

// tfvarsSamples are the sample variable files of dir, by file name, with
// the variables each sets: terraform.tfvars.json when it exists, else every
// .tfvars file (top-level names only: the values are
// scripts/examples-check.sh's to check).
func tfvarsSamples(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	if sample, err := os.ReadFile(filepath.Join(dir, "terraform.tfvars.json")); err == nil {
		var values map[string]any
		if err := json.Unmarshal(sample, &values); err != nil {
			t.Fatalf("%s/terraform.tfvars.json: %v", dir, err)
		}
		out["terraform.tfvars.json"] = values
		return out
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.tfvars"))
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		values := map[string]any{}
		for _, m := range tfvarsTopLevel.FindAllStringSubmatch(string(src), -1) {
			values[m[1]] = true
		}
		out[filepath.Base(f)] = values
	}
	return out
}
