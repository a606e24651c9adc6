package repoconfig

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/change/changetest"
	"github.com/quorum-review/quorum/internal/specialist"
)

// gitRepo is a real git repository (changetest.Repo) with the shorthand
// these tests use.
type gitRepo struct {
	*changetest.Repo
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	r := changetest.NewRepo(t)
	return &gitRepo{Repo: r, dir: r.Dir}
}

func (r *gitRepo) git(args ...string) string { return r.Git(args...) }

// load commits base, then head (files by path), and loads the
// configuration of the change between them.
func load(t *testing.T, base, head map[string]string) (Config, []string) {
	t.Helper()
	r := newGitRepo(t)
	commit := func(files map[string]string) string {
		for p, content := range files {
			full := filepath.Join(r.dir, p)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r.git("add", "-A")
		r.git("commit", "-q", "--allow-empty", "-m", "c")
		return r.git("rev-parse", "HEAD")
	}
	b, h := commit(base), commit(head)
	c, err := change.NewLocal(r.dir).Change(context.Background(), change.Ref{Base: b, Head: h})
	if err != nil {
		t.Fatal(err)
	}
	return Load(context.Background(), c)
}

func TestLoadDefaultsWithoutFile(t *testing.T) {
	t.Parallel()
	cfg, problems := load(t, map[string]string{"main.go": "package main\n"},
		map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
	if len(problems) != 0 {
		t.Errorf("problems = %q, want none", problems)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("config = %+v, want %+v", cfg, Default())
	}
	if cfg.Quorum != 3 || len(cfg.Specialists) != 4 || cfg.BlockingSeverity != "high" || cfg.MaxFindings != 50 {
		t.Errorf("defaults = %+v, want 4 specialists, quorum 3, high, 50", cfg)
	}
	if !cfg.Includes("any/file.go") {
		t.Error("default config excludes a file")
	}
}

// A pull request that rewrites .quorum.yaml to switch its own review off
// is reviewed with the configuration of its base.
func TestLoadReadsBaseNotHead(t *testing.T) {
	t.Parallel()
	cfg, problems := load(t,
		map[string]string{".quorum.yaml": "version: 1\nspecialists: [security, tests]\nquorum: 2\nblocking_severity: medium\n"},
		map[string]string{
			".quorum.yaml": "version: 1\nspecialists: [tests]\nquorum: 1\nblocking_severity: info\npaths:\n  exclude: ['**']\nmax_findings: 1\n",
			".quorum.yml":  "specialists: [logic]\n",
		})
	if len(problems) != 0 {
		t.Errorf("problems = %q", problems)
	}
	if !reflect.DeepEqual(cfg.Specialists, []string{"security", "tests"}) || cfg.Quorum != 2 || cfg.BlockingSeverity != "medium" {
		t.Errorf("config = %+v, want base's (security, tests; quorum 2; medium)", cfg)
	}
	if !cfg.Includes("main.go") || cfg.MaxFindings != 50 {
		t.Errorf("head's paths or max_findings applied: %+v", cfg)
	}
	if cfg.File != ".quorum.yaml" {
		t.Errorf("File = %q", cfg.File)
	}
}

// A file added by the pull request itself does not apply to it.
func TestLoadIgnoresFileAddedAtHead(t *testing.T) {
	t.Parallel()
	cfg, problems := load(t, map[string]string{"a.go": "package a\n"}, map[string]string{".quorum.yaml": "specialists: [tests]\n"})
	if len(problems) != 0 || !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("config = %+v, problems %q; want defaults", cfg, problems)
	}
}

func TestLoadYMLAtBase(t *testing.T) {
	t.Parallel()
	cfg, problems := load(t, map[string]string{".quorum.yml": "max_findings: 7\n"}, map[string]string{"a.go": "package a\n"})
	if len(problems) != 0 || cfg.MaxFindings != 7 || cfg.File != ".quorum.yml" {
		t.Errorf("config = %+v, problems %q; want max_findings 7 from .quorum.yml", cfg, problems)
	}
}

// A .quorum.yaml that cannot be read as a file gives the defaults and
// says so.
func TestLoadUnreadable(t *testing.T) {
	t.Parallel()
	cfg, problems := load(t, map[string]string{".quorum.yaml/x": "max_findings: 7\n"}, map[string]string{"a.go": "package a\n"})
	if len(problems) != 1 || !strings.Contains(problems[0], "could not be read") || !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("config = %+v, problems %q; want defaults and one problem", cfg, problems)
	}
}

// A configuration at base that is wrong in places applies where it is
// right, and the problems come back.
func TestLoadReportsProblemsAtBase(t *testing.T) {
	t.Parallel()
	cfg, problems := load(t, map[string]string{".quorum.yaml": "max_findings: 7\nquorum: 9\n"}, map[string]string{"a.go": "package a\n"})
	if len(problems) != 1 || !strings.Contains(problems[0], "line 2") || cfg.MaxFindings != 7 || cfg.Quorum != 3 {
		t.Errorf("config = %+v, problems %q", cfg, problems)
	}
}

func TestParseEveryField(t *testing.T) {
	t.Parallel()
	cfg, problems := Parse(".quorum.yaml", []byte(`version: 1
specialists:
  - security
  - logic
  - tests
quorum: 3
blocking_severity: critical
paths:
  include: ["src/**", "cmd/**/*.go"]
  exclude: ["src/gen/**", "**/*_mock.go"]
instructions:
  - path: "src/api/**"
    text: Every handler must check the token's scope.
  - path: "**/*.sql"
    text: Prefer keyset pagination.
max_findings: 12
rules:
  enable: [ruff:S311, oxlint:eslint/no-unused-vars]
  disable: [shellcheck:SC2086]
`))
	if len(problems) != 0 {
		t.Fatalf("problems = %q", problems)
	}
	want := Config{
		File:             ".quorum.yaml",
		Version:          1,
		Specialists:      []string{"security", "logic", "tests"},
		Quorum:           3,
		BlockingSeverity: "critical",
		Paths: Paths{
			Include: []string{"src/**", "cmd/**/*.go"},
			Exclude: []string{"src/gen/**", "**/*_mock.go"},
		},
		Instructions: []Instruction{
			{Path: "src/api/**", Text: "Every handler must check the token's scope."},
			{Path: "**/*.sql", Text: "Prefer keyset pagination."},
		},
		MaxFindings: 12,
		Rules:       specialist.Rules{Enable: []string{"ruff:S311", "oxlint:eslint/no-unused-vars"}, Disable: []string{"shellcheck:SC2086"}},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("config =\n%+v\nwant\n%+v", cfg, want)
	}
}

// A rule that no analyzer has is named and dropped; the others stand.
func TestParseRulesKeepsOnlyKnownRules(t *testing.T) {
	t.Parallel()
	cfg, problems := Parse(".quorum.yaml", []byte("rules:\n  enable: [ruff:S311, ruff:X999, pylint:W0611]\n  disable: shellcheck:SC2086\n"))
	if !slices.Equal(cfg.Rules.Enable, []string{"ruff:S311"}) || cfg.Rules.Disable != nil {
		t.Errorf("rules %+v, want enable [ruff:S311] and no disable", cfg.Rules)
	}
	if len(problems) != 3 || !strings.Contains(problems[0], `"ruff:X999", which is not a rule`) || !strings.Contains(problems[2], "rules.disable must be a list") {
		t.Errorf("problems %q", problems)
	}
}

func TestParseSpecialistsSetsDefaultQuorum(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		yaml string
		want int
	}{
		{"specialists: [tests]", 1},
		{"specialists: [tests, logic]", 2},
		{"specialists: [tests, logic, security]", 2},
		{"specialists: [tests, tests, logic]", 2}, // repeats count once
	} {
		cfg, problems := Parse(".quorum.yaml", []byte(tc.yaml))
		if len(problems) != 0 || cfg.Quorum != tc.want {
			t.Errorf("%s: quorum %d, problems %q; want %d", tc.yaml, cfg.Quorum, problems, tc.want)
		}
	}
}

func TestIncludes(t *testing.T) {
	t.Parallel()
	cfg := Default()
	cfg.Paths = Paths{Include: []string{"src/**"}, Exclude: []string{"src/gen/**", "**/*.md"}}
	for path, want := range map[string]bool{
		"src/a.go":            true,
		"src/deep/er/b.go":    true,
		"src/gen/x.go":        false,
		"src/docs/readme.md":  false,
		"cmd/main.go":         false,
		"README.md":           false,
		"srcx/a.go":           false,
		"src/gen_not/real.go": true,
	} {
		if got := cfg.Includes(path); got != want {
			t.Errorf("Includes(%q) = %v, want %v", path, got, want)
		}
	}
	excludeOnly := Default()
	excludeOnly.Paths.Exclude = []string{"docs/**"}
	if !excludeOnly.Includes("main.go") || excludeOnly.Includes("docs/a/b.md") {
		t.Error("exclude-only config: want main.go in and docs/a/b.md out")
	}
}

func TestEnabledAndBlocks(t *testing.T) {
	t.Parallel()
	cfg, _ := Parse(".quorum.yaml", []byte("specialists: [security]\nblocking_severity: medium\n"))
	if !cfg.Enabled("security") || cfg.Enabled("tests") {
		t.Errorf("Enabled: security %v, tests %v; want true, false", cfg.Enabled("security"), cfg.Enabled("tests"))
	}
	for sev, want := range map[string]bool{"critical": true, "high": true, "medium": true, "low": false, "info": false, "bogus": false} {
		if got := cfg.Blocks(sev); got != want {
			t.Errorf("Blocks(%q) = %v, want %v", sev, got, want)
		}
	}
	if Default().Blocks("medium") || !Default().Blocks("high") {
		t.Error("default blocking severity is not high")
	}
}

func TestInstructionsFor(t *testing.T) {
	t.Parallel()
	cfg := Default()
	cfg.Instructions = []Instruction{{Path: "api/**", Text: "A"}, {Path: "**/*.go", Text: "B"}, {Path: "web/**", Text: "C"}}
	if got := cfg.InstructionsFor("api/x.go"); !reflect.DeepEqual(got, []string{"A", "B"}) {
		t.Errorf("InstructionsFor(api/x.go) = %q", got)
	}
	if got := cfg.InstructionsFor("README.md"); got != nil {
		t.Errorf("InstructionsFor(README.md) = %q", got)
	}
}

// Each wrong field is reported with its key and line, falls back to its
// default, and leaves the rest of the file in force.
func TestParseInvalidFieldsFallBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		yaml  string
		check func(Config) bool
		// problem must contain each of these.
		problem []string
	}{
		{"unknown key", "max_findings: 9\nspecialist: [tests]\n",
			func(c Config) bool { return len(c.Specialists) == 4 }, []string{"line 2", `"specialist"`}},
		{"unknown nested key", "max_findings: 9\npaths:\n  include: [a/**]\n  exclud: [b/**]\n",
			func(c Config) bool {
				return reflect.DeepEqual(c.Paths.Include, []string{"a/**"}) && c.Paths.Exclude == nil
			},
			[]string{"line 4", `"paths.exclud"`}},
		{"quorum as string", "max_findings: 9\nquorum: \"2\"\n",
			func(c Config) bool { return c.Quorum == 3 }, []string{"line 2", "quorum", "whole number"}},
		{"quorum as float", "max_findings: 9\nquorum: 2.5\n",
			func(c Config) bool { return c.Quorum == 3 }, []string{"line 2", "quorum"}},
		{"quorum above enabled", "max_findings: 9\nspecialists: [tests, logic]\nquorum: 3\n",
			func(c Config) bool { return c.Quorum == 2 && len(c.Specialists) == 2 }, []string{"line 3", "quorum is 3", "only 2"}},
		{"quorum zero", "max_findings: 9\nquorum: 0\n",
			func(c Config) bool { return c.Quorum == 3 }, []string{"line 2", "quorum is 0"}},
		{"unknown specialist", "max_findings: 9\nspecialists:\n  - tests\n  - style\n",
			func(c Config) bool { return len(c.Specialists) == 4 && c.Quorum == 3 }, []string{"line 4", `"style"`}},
		{"empty specialists", "max_findings: 9\nspecialists: []\n",
			func(c Config) bool { return len(c.Specialists) == 4 }, []string{"line 2", "empty"}},
		{"specialists as string", "max_findings: 9\nspecialists: tests\n",
			func(c Config) bool { return len(c.Specialists) == 4 }, []string{"line 2", "must be a list"}},
		{"unknown severity", "max_findings: 9\nblocking_severity: severe\n",
			func(c Config) bool { return c.BlockingSeverity == "high" }, []string{"line 2", `"severe"`}},
		{"severity as number", "max_findings: 9\nblocking_severity: 3\n",
			func(c Config) bool { return c.BlockingSeverity == "high" }, []string{"line 2", "blocking_severity", "string"}},
		{"bad include glob", "max_findings: 9\npaths:\n  include: [\"src/[a\"]\n  exclude: [x/**]\n",
			func(c Config) bool {
				return c.Paths.Include == nil && reflect.DeepEqual(c.Paths.Exclude, []string{"x/**"})
			},
			[]string{"line 3", "paths.include", "not a valid glob"}},
		{"rooted exclude glob", "max_findings: 9\npaths:\n  exclude: [/docs/**]\n",
			func(c Config) bool { return c.Paths.Exclude == nil }, []string{"line 3", "paths.exclude", "leading /"}},
		{"paths as list", "max_findings: 9\npaths: [a]\n",
			func(c Config) bool { return c.Paths.Include == nil }, []string{"line 2", "paths must be a mapping"}},
		{"max_findings zero", "quorum: 2\nmax_findings: 0\n",
			func(c Config) bool { return c.MaxFindings == 50 && c.Quorum == 2 }, []string{"line 2", "max_findings is 0"}},
		{"max_findings bool", "quorum: 2\nmax_findings: yes\n",
			func(c Config) bool { return c.MaxFindings == 50 && c.Quorum == 2 }, []string{"line 2", "max_findings"}},
		{"version 2", "max_findings: 9\nversion: 2\n",
			func(c Config) bool { return c.Version == 1 }, []string{"line 2", "version 2"}},
		{"duplicate key", "max_findings: 9\nquorum: 2\nquorum: 1\n",
			func(c Config) bool { return c.Quorum == 2 }, []string{"line 3", "twice"}},
		{"bad instruction dropped alone", "max_findings: 9\ninstructions:\n  - path: a/**\n    text: keep\n  - path: \"[\"\n    text: drop\n  - text: no path\n",
			func(c Config) bool {
				return reflect.DeepEqual(c.Instructions, []Instruction{{Path: "a/**", Text: "keep"}})
			},
			[]string{"line 5", "instructions[1].path"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, problems := Parse(".quorum.yaml", []byte(tc.yaml))
			if len(problems) == 0 {
				t.Fatalf("no problem reported; config %+v", cfg)
			}
			if cfg.MaxFindings != 9 && !strings.Contains(tc.yaml, "max_findings: 0") && !strings.Contains(tc.yaml, "max_findings: yes") {
				t.Errorf("the rest of the file was not applied: max_findings %d", cfg.MaxFindings)
			}
			if !tc.check(cfg) {
				t.Errorf("field did not fall back as it should: %+v", cfg)
			}
			for _, want := range tc.problem {
				if !strings.Contains(problems[0], want) {
					t.Errorf("problem %q does not contain %q", problems[0], want)
				}
			}
			if !strings.HasPrefix(problems[0], ".quorum.yaml line ") {
				t.Errorf("problem %q does not name the file and line", problems[0])
			}
		})
	}
}

func TestParseSyntaxErrorGivesDefaults(t *testing.T) {
	t.Parallel()
	cfg, problems := Parse(".quorum.yaml", []byte("max_findings: 9\nspecialists: [tests\n"))
	if len(problems) != 1 || !strings.Contains(problems[0], "not valid YAML") || !strings.Contains(problems[0], "line") {
		t.Errorf("problems = %q, want one naming a syntax error and its line", problems)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("config = %+v, want defaults", cfg)
	}
}

func TestParseNotAMapping(t *testing.T) {
	t.Parallel()
	cfg, problems := Parse(".quorum.yaml", []byte("- tests\n- logic\n"))
	if len(problems) != 1 || !strings.Contains(problems[0], "must be a mapping") {
		t.Errorf("problems = %q", problems)
	}
	if cfg.Quorum != 3 || len(cfg.Specialists) != 4 {
		t.Errorf("config = %+v, want defaults", cfg)
	}
}

func TestParseEmptyFile(t *testing.T) {
	t.Parallel()
	for _, data := range []string{"", "# nothing yet\n", "---\n"} {
		cfg, problems := Parse(".quorum.yaml", []byte(data))
		if len(problems) != 0 || cfg.Quorum != 3 || cfg.MaxFindings != 50 {
			t.Errorf("%q: config %+v, problems %q; want defaults, no problem", data, cfg, problems)
		}
	}
}

func TestParseTooLarge(t *testing.T) {
	t.Parallel()
	data := "max_findings: 9\n# " + strings.Repeat("x", maxFileSize) + "\n"
	cfg, problems := Parse(".quorum.yaml", []byte(data))
	if len(problems) != 1 || cfg.MaxFindings != 50 {
		t.Errorf("config %+v, problems %q; want defaults and one problem", cfg, problems)
	}
}
