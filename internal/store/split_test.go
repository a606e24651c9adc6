package store

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitStatements(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		src  string
		want []string
	}{
		"empty":         {"", nil},
		"comments only": {"-- one\n  -- two\n\n", nil},
		"one":           {"CREATE TABLE a (x INT);", []string{"CREATE TABLE a (x INT)"}},
		"no final semicolon": {"CREATE TABLE a (x INT);\nINSERT INTO a VALUES (1)\n",
			[]string{"CREATE TABLE a (x INT)", "INSERT INTO a VALUES (1)"}},
		"multi-line with comments": {
			"-- header\n\nCREATE TABLE a (\n    x INT, -- the x\n    y TEXT\n);\n  -- between\nCREATE INDEX a_x ON a (x);\n",
			[]string{"CREATE TABLE a (\n    x INT, -- the x\n    y TEXT\n)", "CREATE INDEX a_x ON a (x)"},
		},
		"lone semicolon": {"CREATE TABLE a (x INT)\n;\n;\nCREATE TABLE b (y INT);",
			[]string{"CREATE TABLE a (x INT)", "CREATE TABLE b (y INT)"}},
		"semicolon inside a line": {"INSERT INTO a VALUES ('x;y');\n", []string{"INSERT INTO a VALUES ('x;y')"}},
		"crlf":                    {"CREATE TABLE a (x INT);\r\nCREATE TABLE b (y INT);\r\n", []string{"CREATE TABLE a (x INT)", "CREATE TABLE b (y INT)"}},
	} {
		if got := splitStatements(c.src); !slices.Equal(got, c.want) {
			t.Errorf("%s: splitStatements(%q) =\n%q\nwant\n%q", name, c.src, got, c.want)
		}
	}
}

func TestSplitEmbeddedMigrations(t *testing.T) {
	t.Parallel()
	for _, m := range Migrations() {
		// A statement starts a line with one of these (a backfill's INSERT
		// too); the lines inside it are indented or start otherwise.
		starts := func(s string) bool {
			return strings.HasPrefix(s, "CREATE ") || strings.HasPrefix(s, "ALTER ") || strings.HasPrefix(s, "INSERT ")
		}
		stmts := splitStatements(m.SQL)
		creates := 0
		for _, line := range strings.Split(m.SQL, "\n") {
			if starts(line) {
				creates++
			}
		}
		if len(stmts) != creates {
			t.Errorf("migration %d: %d statements, want one per CREATE, ALTER or INSERT (%d)", m.Version, len(stmts), creates)
		}
		for _, s := range stmts {
			if !starts(s) || strings.HasSuffix(s, ";") || strings.Contains(s, "\n--") {
				t.Errorf("migration %d: badly split statement %q", m.Version, s)
			}
		}
	}
}
