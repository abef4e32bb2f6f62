package conventions_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// statedFigure is a sentence of the prose that states, as it is today, a
// figure the code sets: each match of re in file (one group per figure) must
// say what the Go constant constName is, in unit (1 for a plain number, a
// time unit for a duration). A statement that is no longer found fails too,
// so that rewording it means looking at this table again.
type statedFigure struct {
	file      string
	re        *regexp.Regexp
	constName string
	unit      time.Duration
}

var statedFigures = []statedFigure{
	{"CHANGELOG.md", regexp.MustCompile("garbage collector at `GOGC=([0-9]+)`"), "gcPercent", 1},
	{"templates/index.md.tmpl", regexp.MustCompile(`garbage collector setting \(([0-9]+) unless set\)`), "gcPercent", 1},
	{"docs/index.md", regexp.MustCompile(`garbage collector setting \(([0-9]+) unless set\)`), "gcPercent", 1},
	{"bench/ANALYSIS.md", regexp.MustCompile("`protoserver.Tune`, GOGC ([0-9]+):"), "gcPercent", 1},
	{"CHANGELOG.md", regexp.MustCompile("`qps`/`burst` default to ([0-9]+)/[0-9]+"), "defaultQPS", 1},
	{"CHANGELOG.md", regexp.MustCompile("`qps`/`burst` default to [0-9]+/([0-9]+)"), "defaultBurst", 1},
	{"bench/ANALYSIS.md", regexp.MustCompile(`Defaults are now ([0-9]+)/[0-9]+`), "defaultQPS", 1},
	{"bench/ANALYSIS.md", regexp.MustCompile(`Defaults are now [0-9]+/([0-9]+)`), "defaultBurst", 1},
	{"CHANGELOG.md", regexp.MustCompile(`no HTTP answer within ([0-9]+)s`), "PlanReachTimeout", time.Second},
	{"CHANGELOG.md", regexp.MustCompile(`after one request bounded by ([0-9]+)s`), "PlanReachTimeout", time.Second},
	{"CHANGELOG.md", regexp.MustCompile("`GET /version`, one attempt, ([0-9]+) s"), "PlanReachTimeout", time.Second},
	{"CHANGELOG.md", regexp.MustCompile("new `timeouts` block, default ([0-9]+)m"), "federationDefaultTimeout", time.Minute},
}

// TestStatedFiguresMatchTheCode: the tunables the CHANGELOG and the
// benchmark's analysis state as current (GOGC, client qps and burst,
// timeouts) are the code's.
func TestStatedFiguresMatchTheCode(t *testing.T) {
	root := repoRoot(t)
	consts := productionConstants(t, root)
	for _, s := range statedFigures {
		want, ok := consts[s.constName]
		if !ok {
			t.Errorf("no constant %s in the production code: %s states it (%s); fix the table", s.constName, s.file, s.re)
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(s.file)))
		if err != nil {
			t.Fatal(err)
		}
		matches := s.re.FindAllSubmatch(src, -1)
		if len(matches) == 0 {
			t.Errorf("%s no longer states %s as %q: say it there again, or change this table", s.file, s.constName, s.re)
		}
		for _, m := range matches {
			n, _ := strconv.ParseInt(string(m[1]), 10, 64)
			if got := time.Duration(n) * s.unit; int64(got) != want {
				t.Errorf("%s says %q, but the code's %s is %s", s.file, m[0], s.constName, figure(want, s.unit))
			}
		}
	}
}

// gogcMention is a GOGC figure in prose; historyMarker a word that puts a
// sentence in the past or in a comparison ("was 50", "instead of 50").
var (
	gogcMention   = regexp.MustCompile("GOGC[ =]([0-9]+)")
	historyMarker = regexp.MustCompile(`(?i)\b(?:was|were|then|before|first|instead of|still|gave|showed|against|had it)\b`)
)

// TestGOGCProseIsCurrent: a sentence of the CHANGELOG or the benchmark's
// analysis that names a GOGC figure other than the code's says that it is
// history (one of historyMarker's words), so a figure left behind by a
// change of the code does not read as today's.
func TestGOGCProseIsCurrent(t *testing.T) {
	root := repoRoot(t)
	want := productionConstants(t, root)["gcPercent"]
	if want == 0 {
		t.Fatal("no constant gcPercent in the production code")
	}
	seen := 0
	for _, file := range []string{"CHANGELOG.md", "bench/ANALYSIS.md", "README.md", "templates/index.md.tmpl"} {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		for _, sentence := range sentences(string(src)) {
			for _, m := range gogcMention.FindAllStringSubmatch(sentence, -1) {
				seen++
				if n, _ := strconv.ParseInt(m[1], 10, 64); n != want && !historyMarker.MatchString(sentence) {
					t.Errorf("%s: %q states %s as if current, and the code's is %d: correct it, or say it was so (\"was\", \"then\")",
						file, sentence, m[0], want)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no GOGC figure in the prose: the test reads nothing")
	}
}

// sentences splits text into sentences, joining wrapped lines: a full stop
// followed by a space, or a blank line, ends one.
func sentences(text string) []string {
	var out []string
	for _, para := range regexp.MustCompile(`\n\s*\n`).Split(text, -1) {
		joined := strings.Join(strings.Fields(para), " ")
		out = append(out, regexp.MustCompile(`\. `).Split(joined, -1)...)
	}
	return out
}

func figure(v int64, unit time.Duration) string {
	if unit == 1 {
		return strconv.FormatInt(v, 10)
	}
	return time.Duration(v).String()
}

// productionConstants are the integer and duration constants (N, or
// N * time.Unit) declared in the repository's production Go files, by name;
// a name declared twice with different values is left out.
func productionConstants(t *testing.T, root string) map[string]int64 {
	t.Helper()
	units := map[string]int64{"Nanosecond": 1, "Microsecond": int64(time.Microsecond), "Millisecond": int64(time.Millisecond),
		"Second": int64(time.Second), "Minute": int64(time.Minute), "Hour": int64(time.Hour)}
	var eval func(e ast.Expr) (int64, bool)
	eval = func(e ast.Expr) (int64, bool) {
		switch e := e.(type) {
		case *ast.BasicLit:
			n, err := strconv.ParseInt(e.Value, 0, 64)
			return n, e.Kind == token.INT && err == nil
		case *ast.ParenExpr:
			return eval(e.X)
		case *ast.SelectorExpr:
			if pkg, ok := e.X.(*ast.Ident); ok && pkg.Name == "time" {
				n, ok := units[e.Sel.Name]
				return n, ok
			}
		case *ast.BinaryExpr:
			x, okX := eval(e.X)
			y, okY := eval(e.Y)
			if okX && okY && e.Op == token.MUL {
				return x * y, true
			}
		}
		return 0, false
	}
	consts, twice := map[string]int64{}, map[string]bool{}
	walkRepo(t, root, func(rel string, src []byte) {
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return
		}
		f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs, _ := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if v, ok := eval(vs.Values[i]); ok {
						if old, seen := consts[name.Name]; seen && old != v {
							twice[name.Name] = true
						}
						consts[name.Name] = v
					}
				}
			}
		}
	})
	for name := range twice {
		delete(consts, name)
	}
	return consts
}
