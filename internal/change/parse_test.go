package change

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A diff as git prints it, with a copy (Local does not ask git for copy
// detection, but other sources' diffs may have them), a pure deletion
// hunk, a mode change, a quoted path and a file without final newline.
const sampleDiff = `diff --git a/src/a.go b/src/copy.go
similarity index 90%
copy from src/a.go
copy to src/copy.go
index 1111111111111111111111111111111111111111..2222222222222222222222222222222222222222 100644
--- a/src/a.go
+++ b/src/copy.go
@@ -1,3 +1,3 @@ package a
 package a
-var x = 1
+var x = 2
 var y = 3
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git a/b.txt b/b.txt
index 3333333333333333333333333333333333333333..4444444444444444444444444444444444444444 100644
--- a/b.txt
+++ b/b.txt
@@ -10,2 +9,0 @@ func f() {
-gone 1
-gone 2
@@ -20,2 +18,3 @@
 ctx
-old
+new
+tail
\ No newline at end of file
diff --git "a/sp\303\244ce name.txt" "b/sp\303\244ce name.txt"
new file mode 100644
index 0000000000000000000000000000000000000000..5555555555555555555555555555555555555555
--- /dev/null
+++ "b/sp\303\244ce name.txt"
@@ -0,0 +1 @@
+hi
`

func TestParseDiff(t *testing.T) {
	t.Parallel()
	files, err := ParseDiff(strings.NewReader(sampleDiff))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Fatalf("got %d files, want 4", len(files))
	}
	cp, mode, b, sp := files[0], files[1], files[2], files[3]

	if cp.Status != StatusCopied || cp.OldPath != "src/a.go" || cp.NewPath != "src/copy.go" {
		t.Errorf("copy = %s %q → %q", cp.Status, cp.OldPath, cp.NewPath)
	}
	if cp.Hunks[0].Section != "package a" || !slices.Equal(cp.AddedLines(), []int{2}) {
		t.Errorf("copy hunk section %q, added %v", cp.Hunks[0].Section, cp.AddedLines())
	}
	if mode.Status != StatusModified || mode.OldMode != 0o100644 || mode.NewMode != 0o100755 || len(mode.Hunks) != 0 {
		t.Errorf("mode change = %+v", mode)
	}
	if cp.NewMode != 0o100644 {
		t.Errorf("unchanged mode = %o, want 100644 on both sides", cp.NewMode)
	}

	// A hunk that only deletes has an empty new range: no line of head is
	// in it, and the next hunk still numbers from its own header.
	if len(b.Hunks) != 2 || b.Hunks[0].NewLines != 0 {
		t.Fatalf("b.txt hunks = %+v", b.Hunks)
	}
	for _, line := range []int{8, 9, 17} {
		if h := b.HunkFor(line); h != nil {
			t.Errorf("HunkFor(%d) = hunk at %d, want none", line, h.NewStart)
		}
	}
	if h := b.HunkFor(18); h != &b.Hunks[1] {
		t.Errorf("HunkFor(18) = %+v, want the second hunk", h)
	}
	if got := b.AddedLines(); !slices.Equal(got, []int{19, 20}) {
		t.Errorf("b.txt added = %v, want [19 20]", got)
	}
	last := b.Hunks[1].Lines[len(b.Hunks[1].Lines)-1]
	if last.Text != "tail" || last.NewNumber != 20 {
		t.Errorf("line without final newline = %+v", last)
	}
	if del := b.Hunks[0].Lines[1]; del.Kind != KindDeleted || del.OldNumber != 11 || del.NewNumber != 0 {
		t.Errorf("deleted line = %+v", del)
	}

	if sp.Status != StatusAdded || sp.NewPath != "späce name.txt" || sp.OldPath != "" {
		t.Errorf("quoted new file = %s %q → %q", sp.Status, sp.OldPath, sp.NewPath)
	}
}

func TestParseDiffMalformed(t *testing.T) {
	t.Parallel()
	bad := "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-only one line\n"
	if _, err := ParseDiff(strings.NewReader(bad)); err == nil {
		t.Error("ParseDiff accepted a hunk shorter than its header says")
	}
}

func TestHelpersOnHandBuiltFile(t *testing.T) {
	t.Parallel()
	// Hunks at 5-7 and 20-22 (new side); 6 and 21 added.
	f := &File{NewPath: "x", Status: StatusModified, Hunks: []Hunk{
		{OldStart: 5, OldLines: 3, NewStart: 5, NewLines: 3, Lines: []Line{
			{Kind: KindContext, OldNumber: 5, NewNumber: 5},
			{Kind: KindDeleted, OldNumber: 6},
			{Kind: KindAdded, NewNumber: 6},
			{Kind: KindContext, OldNumber: 7, NewNumber: 7},
		}},
		{OldStart: 20, OldLines: 2, NewStart: 20, NewLines: 3, Lines: []Line{
			{Kind: KindContext, OldNumber: 20, NewNumber: 20},
			{Kind: KindAdded, NewNumber: 21},
			{Kind: KindContext, OldNumber: 21, NewNumber: 22},
		}},
	}}
	for line, want := range map[int]struct {
		changed bool
		hunk    int // NewStart of the hunk, 0 for none
	}{
		4: {false, 0}, 5: {false, 5}, 6: {true, 5}, 7: {false, 5}, 8: {false, 0},
		19: {false, 0}, 20: {false, 20}, 21: {true, 20}, 22: {false, 20}, 23: {false, 0},
	} {
		if got := f.Changed(line); got != want.changed {
			t.Errorf("Changed(%d) = %v, want %v", line, got, want.changed)
		}
		h := f.HunkFor(line)
		if (h == nil) != (want.hunk == 0) || (h != nil && h.NewStart != want.hunk) {
			t.Errorf("HunkFor(%d) = %+v, want hunk at %d", line, h, want.hunk)
		}
	}
	if _, err := (&Change{}).ReadFile(context.Background(), "x"); err == nil {
		t.Error("ReadFile on a change without a tree succeeded")
	}
}

// benchDiff is a diff of 20 files with 25 added, 5 deleted and 6 context
// lines each: about 500 changed lines, the benchmark size.
func benchDiff() string {
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "diff --git a/pkg/f%d.go b/pkg/f%d.go\n", i, i)
		fmt.Fprintf(&b, "index %040d..%040d 100644\n", i, i+1)
		fmt.Fprintf(&b, "--- a/pkg/f%d.go\n+++ b/pkg/f%d.go\n", i, i)
		fmt.Fprintf(&b, "@@ -10,11 +10,31 @@ func f%d() {\n", i)
		for j := range 3 {
			fmt.Fprintf(&b, " \tctx := %d\n", j)
		}
		for j := range 5 {
			fmt.Fprintf(&b, "-\told := %d\n", j)
		}
		for j := range 25 {
			fmt.Fprintf(&b, "+\tx%d := fmt.Sprintf(\"%%d\", %d)\n", j, j)
		}
		for j := range 3 {
			fmt.Fprintf(&b, " \ttail := %d\n", j)
		}
	}
	return b.String()
}

func BenchmarkParseDiff(b *testing.B) {
	diff := benchDiff()
	files, err := ParseDiff(strings.NewReader(diff))
	if err != nil || len(files) != 20 || len(files[0].AddedLines()) != 25 {
		b.Fatalf("bench diff parses to %d files (%v)", len(files), err)
	}
	b.SetBytes(int64(len(diff)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseDiff(strings.NewReader(diff)); err != nil {
			b.Fatal(err)
		}
	}
}
