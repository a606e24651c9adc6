package udiff_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/udiff"
)

// numbered returns n lines "line 1\n" … "line n\n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString("line " + itoa(i) + "\n")
	}
	return b.String()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// at returns the offset of the first occurrence of s in text.
func at(t *testing.T, text, s string) int {
	t.Helper()
	i := strings.Index(text, s)
	if i < 0 {
		t.Fatalf("%q not in text", s)
	}
	return i
}

// Every patch must apply with git apply to the file it was made from, and
// give exactly the edited text.
func TestUnifiedDiffApplies(t *testing.T) {
	t.Parallel()
	long := numbered(30)
	cases := []struct {
		name  string
		old   string
		edits func(old string) []udiff.Edit
	}{
		{"one line in the middle", long, func(o string) []udiff.Edit {
			i := at(t, o, "line 15")
			return []udiff.Edit{{Start: i, End: i + len("line 15"), Text: "LINE fifteen"}}
		}},
		{"first line", long, func(o string) []udiff.Edit {
			return []udiff.Edit{{Start: 0, End: len("line 1"), Text: "first"}}
		}},
		{"last line", long, func(o string) []udiff.Edit {
			i := at(t, o, "line 30")
			return []udiff.Edit{{Start: i, End: len(o), Text: "last\n"}}
		}},
		{"no newline at end of file", "a\nb\nc", func(o string) []udiff.Edit {
			return []udiff.Edit{{Start: 4, End: 5, Text: "C"}}
		}},
		{"adds a newline at end of file", "a\nb\nc", func(o string) []udiff.Edit {
			return []udiff.Edit{{Start: 5, End: 5, Text: "\nd\n"}}
		}},
		{"insertion of lines", long, func(o string) []udiff.Edit {
			i := at(t, o, "line 10")
			return []udiff.Edit{{Start: i, End: i, Text: "new a\nnew b\n"}}
		}},
		{"deletion of lines", long, func(o string) []udiff.Edit {
			i, j := at(t, o, "line 10"), at(t, o, "line 13")
			return []udiff.Edit{{Start: i, End: j}}
		}},
		{"insertion at end of file", long, func(o string) []udiff.Edit {
			return []udiff.Edit{{Start: len(o), End: len(o), Text: "tail\n"}}
		}},
		{"two hunks", long, func(o string) []udiff.Edit {
			i, j := at(t, o, "line 3\n"), at(t, o, "line 25")
			return []udiff.Edit{{Start: j, End: j + 4, Text: "LINE"}, {Start: i, End: i + 4, Text: "LINE"}}
		}},
		{"edits close enough to share a hunk", long, func(o string) []udiff.Edit {
			i, j := at(t, o, "line 12"), at(t, o, "line 17")
			return []udiff.Edit{{Start: i, End: i + 4, Text: "L"}, {Start: j, End: j + 4, Text: "L"}}
		}},
		{"two edits on one line", long, func(o string) []udiff.Edit {
			i := at(t, o, "line 20")
			return []udiff.Edit{{Start: i, End: i + 1, Text: "L"}, {Start: i + 5, End: i + 7, Text: "twenty"}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := goanalysistest.NewRepo(t)
			r.Write(map[string]string{"dir/file.go": tc.old})
			r.Commit("base")
			edits := tc.edits(tc.old)
			patch, err := udiff.Unified("dir/file.go", []byte(tc.old), edits)
			if err != nil {
				t.Fatal(err)
			}
			if out, err := r.GitInput(patch, "apply", "--check", "-"); err != nil {
				t.Fatalf("git apply --check: %v\n%s\npatch:\n%s", err, out, patch)
			}
			if out, err := r.GitInput(patch, "apply", "-"); err != nil {
				t.Fatalf("git apply: %v\n%s", err, out)
			}
			got, err := os.ReadFile(filepath.Join(r.Dir, "dir", "file.go"))
			if err != nil {
				t.Fatal(err)
			}
			if want := apply(tc.old, edits); string(got) != want {
				t.Errorf("applied patch gives\n%q\nwant\n%q\npatch:\n%s", got, want, patch)
			}
		})
	}
}

func TestUnifiedDiffRefusesBadEdits(t *testing.T) {
	t.Parallel()
	for name, edits := range map[string][]udiff.Edit{
		"out of range": {{Start: 2, End: 99}},
		"backwards":    {{Start: 3, End: 2}},
		"overlapping":  {{Start: 0, End: 3}, {Start: 2, End: 4}},
	} {
		if _, err := udiff.Unified("f", []byte("abcdef\n"), edits); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if d, err := udiff.Unified("f", []byte("abc\n"), []udiff.Edit{{Start: 0, End: 1, Text: "a"}}); err != nil || d != "" {
		t.Errorf("an edit that changes nothing gives %q, %v; want no patch", d, err)
	}
}

// apply applies non-overlapping edits to old.
func apply(old string, edits []udiff.Edit) string {
	var b strings.Builder
	pos := 0
	sorted := append([]udiff.Edit(nil), edits...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && sorted[j].Start < sorted[j-1].Start; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	for _, e := range sorted {
		b.WriteString(old[pos:e.Start])
		b.WriteString(e.Text)
		pos = e.End
	}
	b.WriteString(old[pos:])
	return b.String()
}
