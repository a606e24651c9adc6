package polyglot

import (
	"path"
	"slices"
)

// toolOf returns the analyzer of a language (lang.Detect), or nil.
func toolOf(l string) *Tool {
	if l == "" {
		return nil
	}
	for _, t := range Tools {
		if slices.Contains(t.Languages, l) {
			return t
		}
	}
	return nil
}

// zshNames are zsh's startup files, shell that ShellCheck cannot check.
var zshNames = map[string]bool{".zshrc": true, ".zshenv": true, ".zprofile": true, ".zlogin": true}

// zsh reports whether a shell file is a zsh script by its name (one whose
// first line names zsh, ShellCheck recognises and declines itself).
func zsh(p string) bool {
	return path.Ext(p) == ".zsh" || zshNames[path.Base(p)]
}
