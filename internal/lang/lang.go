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

// names are whole file names of source code that carry no extension of
// their language: shell that tools source (direnv's .envrc, the shells'
// startup files).
var names = map[string]string{
	".envrc": "shell", ".bashrc": "shell", ".bash_profile": "shell", ".bash_login": "shell", ".bash_logout": "shell",
	".profile": "shell", ".kshrc": "shell", ".zshrc": "shell", ".zshenv": "shell", ".zprofile": "shell", ".zlogin": "shell",
	"PKGBUILD": "shell", "APKBUILD": "shell",
}

// interpreters maps the programs a script's first line names (by base
// name, version digits dropped) to the script's language.
var interpreters = map[string]string{
	"sh": "shell", "bash": "shell", "dash": "shell", "ksh": "shell", "mksh": "shell", "ash": "shell", "zsh": "shell",
	"python": "Python", "pypy": "Python",
	"node": "JavaScript", "nodejs": "JavaScript", "deno": "TypeScript", "bun": "JavaScript",
	"ruby": "Ruby", "perl": "Perl", "php": "PHP", "lua": "Lua", "Rscript": "R", "julia": "Julia", "elixir": "Elixir",
}

// Of returns the programming language of a file by its name, or ""
// for a file that is not source code (documentation, data, configuration).
// Go files the go command ignores (under testdata, or a directory whose
// name starts with "_" or ".") are test data, not source.
// An extension is matched in any case ("x.PY"), as the file systems of
// macOS and Windows let a program import it; Go's only as .go, all the go
// command builds.
func Of(p string) string {
	base := path.Base(p)
	if l, ok := languages[base]; ok {
		return l
	}
	if l, ok := names[base]; ok {
		return l
	}
	if dockerfileName(base) {
		return "Dockerfile"
	}
	ext := path.Ext(base)
	l, ok := languages[ext]
	if !ok {
		l = languages[strings.ToLower(ext)]
		if l == "Go" {
			return "" // the go command builds only .go
		}
	}
	if l == "Go" {
		for _, part := range strings.Split(path.Dir(p), "/") {
			if part == "testdata" || (part != "." && (strings.HasPrefix(part, "_") || strings.HasPrefix(part, "."))) {
				return ""
			}
		}
	}
	return l
}

// Detect returns the language of a file by its name (Of), or, for a file
// whose name has no extension, by the interpreter its first line names
// ("#!/usr/bin/env python3", "#!/usr/local/bin/bash"). head gives the
// file's first bytes; it is called only when the name does not tell.
func Detect(p string, head func() []byte) string {
	if l := Of(p); l != "" || path.Ext(path.Base(p)) != "" || head == nil {
		return l
	}
	return OfShebang(head())
}

// OfShebang returns the language of a script by its first line, or "".
func OfShebang(b []byte) string {
	line, ok := strings.CutPrefix(string(b[:min(len(b), 256)]), "#!")
	if !ok {
		return ""
	}
	line, _, _ = strings.Cut(line, "\n")
	words := strings.Fields(line)
	if len(words) == 0 {
		return ""
	}
	prog := path.Base(words[0])
	if prog == "env" {
		// env [-S] [-i] [NAME=value …] program
		prog = ""
		for _, w := range words[1:] {
			if strings.HasPrefix(w, "-") || strings.Contains(w, "=") {
				continue
			}
			prog = path.Base(w)
			break
		}
	}
	prog = strings.TrimRight(prog, "0123456789.")
	return interpreters[prog]
}

// dockerfileName reports whether base names a Dockerfile by the habits
// of real repositories: Dockerfile.prod, app.dockerfile, and, with no
// extension after it, Dockerfile-dependencies or Containerfile_arm64.
func dockerfileName(base string) bool {
	lower := strings.ToLower(base)
	if strings.HasSuffix(lower, ".dockerfile") || strings.HasSuffix(lower, ".containerfile") {
		return true
	}
	for _, stem := range []string{"Dockerfile", "Containerfile"} {
		rest, ok := strings.CutPrefix(base, stem)
		if !ok || rest == "" {
			continue
		}
		if rest[0] == '.' || (rest[0] == '-' || rest[0] == '_') && !strings.Contains(rest, ".") {
			return true
		}
	}
	return false
}
