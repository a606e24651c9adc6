package secrets

import (
	"path"
	"strings"
)

// testDirs are directories whose files are tests or their fixtures, by the
// conventions of the common ecosystems.
var testDirs = []string{"testdata", "test", "tests", "__tests__", "spec", "fixtures", "__fixtures__", "testfixtures"}

// inTestCode reports whether p is a test or a test's fixture by its name:
// Go's _test.go and testdata/, Python's test_*.py and *_test.py, the
// JavaScript family's *.test.* and *.spec.*, Java's and Kotlin's
// *Test.java and src/test/, Ruby's *_spec.rb, and the usual test and
// fixture directories.
func inTestCode(p string) bool {
	dir, base := path.Split(p)
	for _, d := range strings.Split(strings.TrimSuffix(dir, "/"), "/") {
		for _, t := range testDirs {
			if strings.EqualFold(d, t) {
				return true
			}
		}
	}
	stem, ext := base, path.Ext(base)
	stem = strings.TrimSuffix(stem, ext)
	switch {
	case strings.HasSuffix(stem, "_test"), strings.HasSuffix(stem, "_spec"):
		return true
	case ext == ".py" && strings.HasPrefix(stem, "test_"):
		return true
	case strings.Contains(stem, ".test") || strings.Contains(stem, ".spec"):
		return true
	case (ext == ".java" || ext == ".kt" || ext == ".cs") && (strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests")):
		return true
	}
	return false
}
