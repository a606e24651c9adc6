// Package lang tells a file's programming language by its name: what the
// review's coverage rule and the engines of each language go by.
package lang

import (
	"path"
	"strings"
)

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

// Of returns the programming language of a file by its name, or ""
// for a file that is not source code (documentation, data, configuration).
// Go files the go command ignores (under testdata, or a directory whose
// name starts with "_" or ".") are test data, not source.
func Of(p string) string {
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
