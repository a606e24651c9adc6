package polyglot_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/change/changetest"
	"github.com/quorum-review/quorum/internal/specialist"
)

// The import plugin's rules that resolve imports are refused even where
// the repository turns them on: their findings would tell what exists in
// files outside the change's ("named import not found" says the file is
// there and what it exports). The refusal is a note; the plugin's rules
// that decide by the file alone still run.
func TestEngineRefusesImportRulesThatReadOtherFiles(t *testing.T) {
	t.Parallel()
	e := installed(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.js"), []byte("export const token = 1;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := changetest.NewRepo(t)
	r.Write(map[string]string{"README.md": "x\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"a.js": "import { token, missing } from \"" + filepath.ToSlash(outside) + "/secret.js\";\n" +
		"const x = require(\"./x\");\nexport const v = [token, missing, x];\n"})
	head := r.Commit("head")
	var notes []string
	ctx := specialist.WithNotes(context.Background(), func(n string) { notes = append(notes, n) })
	rules := specialist.Rules{Enable: []string{"oxlint:import/named", "oxlint:import/no-commonjs"}}
	fs, err := e.Findings(specialist.WithRules(ctx, rules), r.Change(base, head), specialist.Logic)
	if err != nil {
		t.Fatal(err)
	}
	if g := rulesOf(fs); !slices.Equal(g, []string{"oxlint:import/no-commonjs a.js:2"}) {
		t.Errorf("logic findings %v, want only no-commonjs's", g)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "oxlint:import/named, which quorum does not run") {
		t.Errorf("notes %q, want one saying import/named was refused", notes)
	}
}
