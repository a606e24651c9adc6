package pipeline

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/quorum-review/quorum/internal/change"
)

// gap is a changed source file that no engine analysed, and why.
type gap struct {
	path, reason string
}

// languages maps file extensions (and a few whole names) of source code
// to their language. Documentation, configuration, lock and data files are
// not source: they need no engine.
var languages = map[string]string{
	".go": "Go",
	".py": "Python", ".pyi": "Python",
	".js": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript", ".jsx": "JavaScript",
	".ts": "TypeScript", ".mts": "TypeScript", ".cts": "TypeScript", ".tsx": "TypeScript",
	".vue": "Vue", ".svelte": "Svelte",
	".sh": "shell", ".bash": "shell", ".zsh": "shell", ".ksh": "shell",
	"Dockerfile": "Dockerfile", "Containerfile": "Dockerfile",
	".rb": "Ruby", ".java": "Java", ".kt": "Kotlin", ".kts": "Kotlin", ".scala": "Scala",
	".rs": "Rust", ".c": "C", ".h": "C", ".cc": "C++", ".cpp": "C++", ".cxx": "C++", ".hpp": "C++", ".hh": "C++",
	".cs": "C#", ".fs": "F#", ".php": "PHP", ".swift": "Swift", ".m": "Objective-C", ".mm": "Objective-C",
	".lua": "Lua", ".pl": "Perl", ".pm": "Perl", ".ex": "Elixir", ".exs": "Elixir", ".erl": "Erlang",
	".hs": "Haskell", ".ml": "OCaml", ".dart": "Dart", ".r": "R", ".R": "R", ".jl": "Julia",
	".sql": "SQL", ".ps1": "PowerShell", ".groovy": "Groovy", ".clj": "Clojure", ".zig": "Zig",
	".tf": "Terraform", ".sol": "Solidity",
}

// Language returns the programming language of a file by its name, or ""
// for a file that is not source code (documentation, data, configuration).
// Go files the go command ignores (under testdata, or a directory whose
// name starts with "_" or ".") are test data, not source.
func Language(p string) string {
	base := path.Base(p)
	if l, ok := languages[base]; ok {
		return l
	}
	if strings.HasPrefix(base, "Dockerfile.") || strings.HasSuffix(base, ".dockerfile") {
		return "Dockerfile"
	}
	l := languages[path.Ext(base)]
	if l == "Go" {
		for _, part := range strings.Split(path.Dir(p), "/") {
			if part == "testdata" || (part != "." && (strings.HasPrefix(part, "_") || strings.HasPrefix(part, "."))) {
				return ""
			}
		}
	}
	return l
}

// unanalysed returns the changed source files (present at head) that no
// engine of a specialist that succeeded said it analysed, each with the
// reasons the engines gave, or that no engine covers its language.
func unanalysed(c *change.Change, outcomes []Outcome) []gap {
	analysed := map[string]bool{}
	reasons := map[string][]string{}
	for _, o := range outcomes {
		if o.Err != nil {
			continue
		}
		for _, cv := range o.Coverage {
			if cv.Analysed {
				analysed[cv.Path] = true
			} else if cv.Reason != "" && !slices.Contains(reasons[cv.Path], cv.Reason) {
				reasons[cv.Path] = append(reasons[cv.Path], cv.Reason)
			}
		}
	}
	var gaps []gap
	for _, f := range c.Files {
		if f.Status == change.StatusDeleted || f.NewPath == "" {
			continue
		}
		lang := Language(f.NewPath)
		if lang == "" || analysed[f.NewPath] {
			continue
		}
		why := strings.Join(reasons[f.NewPath], "; ")
		if why == "" {
			why = fmt.Sprintf("no engine reviews %s", lang)
		}
		gaps = append(gaps, gap{path: f.NewPath, reason: why})
	}
	return gaps
}

// gapText says what was not analysed, in a few lines: files grouped by
// reason, at most a handful named per reason.
func gapText(gaps []gap) string {
	var order []string
	byReason := map[string][]string{}
	for _, g := range gaps {
		if _, ok := byReason[g.reason]; !ok {
			order = append(order, g.reason)
		}
		byReason[g.reason] = append(byReason[g.reason], g.path)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Not analysed: %s of changed source, so this review cannot approve it.\n", plural(len(gaps), "file"))
	for _, r := range order {
		paths := byReason[r]
		shown := slices.Clone(paths[:min(5, len(paths))])
		for i, p := range shown {
			if strings.ContainsFunc(p, unicode.IsControl) {
				shown[i] = strconv.Quote(p)
			}
		}
		more := ""
		if len(paths) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(paths)-len(shown))
		}
		fmt.Fprintf(&b, "- %s%s: %s\n", strings.Join(shown, ", "), more, r)
	}
	return b.String()
}
