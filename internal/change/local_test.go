package change

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/sandbox"
)

func TestLocalStatuses(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	r.write("keep.go", joinLines(numbered("keep", 5)))
	r.write("gone_test.go", joinLines(numbered("gone", 3)))
	r.write("old/name.go", joinLines(numbered("moved", 20)))
	base := r.commit("base")

	r.write("keep.go", joinLines(append(numbered("keep", 5), "keep 6")))
	r.remove("gone_test.go")
	r.remove("old/name.go")
	r.write("new/name.go", joinLines(append(numbered("moved", 20), "moved 21")))
	r.write("added.go", "package added\n")
	head := r.commit("head")

	c, err := NewLocal(r.dir).Change(t.Context(), Ref{Owner: "o", Repo: "r", PRNumber: 7, Base: base, Head: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseSHA != base || c.HeadSHA != head {
		t.Errorf("base, head = %s, %s; want %s, %s", c.BaseSHA, c.HeadSHA, base, head)
	}
	if c.Owner != "o" || c.Repo != "r" || c.PRNumber != 7 {
		t.Errorf("identity = %s/%s#%d, want o/r#7", c.Owner, c.Repo, c.PRNumber)
	}
	if len(c.Skipped) != 0 {
		t.Errorf("skipped %v, want none", c.Skipped)
	}
	want := map[string]struct {
		status   Status
		old, new string
		added    []int
	}{
		"keep.go":      {StatusModified, "keep.go", "keep.go", []int{6}},
		"gone_test.go": {StatusDeleted, "gone_test.go", "", nil},
		"new/name.go":  {StatusRenamed, "old/name.go", "new/name.go", []int{21}},
		"added.go":     {StatusAdded, "", "added.go", []int{1}},
	}
	if len(c.Files) != len(want) {
		t.Fatalf("got %d files, want %d", len(c.Files), len(want))
	}
	for path, w := range want {
		f := fileByPath(t, c, path)
		if f.Status != w.status || f.OldPath != w.old || f.NewPath != w.new {
			t.Errorf("%s: status %s, %q → %q; want %s, %q → %q", path, f.Status, f.OldPath, f.NewPath, w.status, w.old, w.new)
		}
		if got := f.AddedLines(); !slices.Equal(got, w.added) {
			t.Errorf("%s: added lines %v, want %v", path, got, w.added)
		}
	}
	// A deleted file keeps its deleted lines, numbered at base.
	gone := fileByPath(t, c, "gone_test.go")
	if len(gone.Hunks) != 1 || len(gone.Hunks[0].Lines) != 3 {
		t.Fatalf("deleted file hunks = %+v", gone.Hunks)
	}
	if l := gone.Hunks[0].Lines[2]; l.Kind != KindDeleted || l.OldNumber != 3 || l.NewNumber != 0 || l.Text != "gone 3" {
		t.Errorf("last deleted line = %+v", l)
	}
}

func TestLocalLineNumbersAcrossHunks(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	lines := numbered("line", 100)
	r.write("f.txt", joinLines(lines))
	base := r.commit("base")

	// Modify line 10; insert two lines after line 50; delete line 70;
	// append a line at the end. Far enough apart for separate hunks.
	next := slices.Clone(lines)
	next[9] = "line 10 changed"
	next = slices.Insert(next, 50, "new a", "new b")
	next = slices.Delete(next, 71, 72) // old line 70, now at index 71
	next = append(next, "line 101")
	r.write("f.txt", joinLines(next))
	r.commit("head")

	c, err := NewLocal(r.dir).Change(t.Context(), Ref{Base: base})
	if err != nil {
		t.Fatal(err)
	}
	f := fileByPath(t, c, "f.txt")
	if len(f.Hunks) != 4 {
		t.Fatalf("got %d hunks, want 4: %+v", len(f.Hunks), f.Hunks)
	}
	// New numbering: 1-50 as before, 51-52 new, old 51-69 → 53-71, old 70
	// gone, old 71-100 → 72-101, then 102 appended.
	wantAdded := []int{10, 51, 52, 102}
	if got := f.AddedLines(); !slices.Equal(got, wantAdded) {
		t.Errorf("added lines = %v, want %v", got, wantAdded)
	}
	for _, n := range wantAdded {
		if !f.Changed(n) {
			t.Errorf("Changed(%d) = false, want true", n)
		}
		if h := f.HunkFor(n); h == nil {
			t.Errorf("HunkFor(%d) = nil", n)
		}
	}
	// The new text is at the number AddedLines gives.
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			if l.Kind != KindDeleted && next[l.NewNumber-1] != l.Text {
				t.Errorf("line %d is %q in the diff, %q in the file", l.NewNumber, l.Text, next[l.NewNumber-1])
			}
			if l.Kind != KindAdded && lines[l.OldNumber-1] != l.Text {
				t.Errorf("old line %d is %q in the diff, %q in the file", l.OldNumber, l.Text, lines[l.OldNumber-1])
			}
		}
	}
	// Context lines are in a hunk but not changed; lines far from any
	// change are in no hunk.
	for _, n := range []int{9, 11, 53, 70, 99} {
		if f.Changed(n) {
			t.Errorf("Changed(%d) = true for a context line", n)
		}
		if f.HunkFor(n) == nil {
			t.Errorf("HunkFor(%d) = nil for a context line", n)
		}
	}
	for _, n := range []int{0, 1, 30, 60, 90, 103, 1000} {
		if f.Changed(n) || f.HunkFor(n) != nil {
			t.Errorf("line %d: Changed %v, HunkFor %v; want false, nil", n, f.Changed(n), f.HunkFor(n))
		}
	}
	if h := f.HunkFor(51); h.OldStart != 48 || h.OldLines != 6 || h.NewStart != 48 || h.NewLines != 8 {
		t.Errorf("hunk for line 51 = -%d,%d +%d,%d; want -48,6 +48,8", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
	}
}

func TestLocalSkips(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	r.write("README.md", "hello\n")
	r.write("old_vendor/vendor/lib/gone.go", "package lib\n")
	regen := append([]string{"// Code generated by mockgen. DO NOT EDIT.", "", "package main"}, numbered("// line", 30)...)
	r.write("regen.go", joinLines(regen))
	r.write("hand.py", "import os\n")
	r.write("hand.go", "package main\n")
	r.write("proto.go", "// Code generated by protoc-gen-go v1.30. DO NOT EDIT.\npackage main\n")
	base := r.commit("base")

	r.write("main.go", "package main\n\nfunc main() {}\n")
	// The marker is far from the change: known only by reading head.
	r.write("regen.go", joinLines(append(regen, "// line 31")))
	r.write("logo.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	r.write("gen.go", "// Code generated by stringer; DO NOT EDIT.\n\npackage main\n")
	r.write("api/api.pb.go", "package api\n")
	r.write("vendor/github.com/x/y/y.go", "package y\n")
	r.write("web/node_modules/left-pad/index.js", "module.exports = 1\n")
	r.write("go.sum", "example.com/x v1.0.0 h1:abc=\n")
	r.write("web/package-lock.json", "{}\n")
	r.write("web/app.min.js", "var a=1;\n")
	r.write("web/bundle.js", strings.Repeat("var a=1;", 200)+"\n")
	r.write("web/app.js", "const a = 1;\n")
	r.write("dist/node/axios.cjs", "module.exports = 1;\n")
	r.write("web/distinct.js", "const b = 2;\n")
	r.remove("old_vendor/vendor/lib/gone.go")
	// Look-alikes that are reviewed: a comment that is not the marker, and
	// a vendor.go that is not in a vendor directory.
	r.write("handmade.go", "// Code generated by hand, then edited.\npackage main\n")
	r.write("vendor.go", "package main\n")
	// A generated-code marker the change adds to a hand-written file is
	// not trusted: the file is reviewed.
	r.write("hand.py", "# @generated\nimport os\nos.system(input())\n")
	r.write("hand.go", "// Code generated by hand. DO NOT EDIT.\npackage main\n")
	// A generator that rewrites its own marker is still trusted.
	r.write("proto.go", "// Code generated by protoc-gen-go v1.31. DO NOT EDIT.\npackage main\n")
	r.commit("head")
	// A symbolic link and a submodule (a gitlink entry) too.
	if err := os.Symlink("main.go", filepath.Join(r.dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	r.git("add", "link.go")
	r.git("update-index", "--add", "--cacheinfo", "160000,"+base+",sub")
	r.git("commit", "-q", "-m", "link and submodule")

	c, err := NewLocal(r.dir).Change(t.Context(), Ref{Base: base})
	if err != nil {
		t.Fatal(err)
	}
	wantSkipped := map[string]Reason{
		"logo.png":                           ReasonBinary,
		"gen.go":                             ReasonGenerated,
		"regen.go":                           ReasonGenerated,
		"proto.go":                           ReasonGenerated,
		"api/api.pb.go":                      ReasonGenerated,
		"vendor/github.com/x/y/y.go":         ReasonVendored,
		"web/node_modules/left-pad/index.js": ReasonVendored,
		"old_vendor/vendor/lib/gone.go":      ReasonVendored,
		"go.sum":                             ReasonLockFile,
		"web/package-lock.json":              ReasonLockFile,
		"web/app.min.js":                     ReasonMinified,
		"web/bundle.js":                      ReasonMinified,
		"dist/node/axios.cjs":                ReasonGenerated,
		"link.go":                            ReasonSymlink,
		"sub":                                ReasonSubmodule,
	}
	got := map[string]Reason{}
	for _, s := range c.Skipped {
		got[s.File.Path()] = s.Reason
	}
	for path, reason := range wantSkipped {
		if got[path] != reason {
			t.Errorf("%s: skipped as %q, want %q", path, got[path], reason)
		}
	}
	if len(got) != len(wantSkipped) {
		t.Errorf("skipped %v, want exactly %v", got, wantSkipped)
	}
	var reviewed []string
	for _, f := range c.Files {
		reviewed = append(reviewed, f.Path())
	}
	slices.Sort(reviewed)
	if want := []string{"hand.go", "hand.py", "handmade.go", "main.go", "vendor.go", "web/app.js", "web/distinct.js"}; !slices.Equal(reviewed, want) {
		t.Errorf("reviewed %v, want %v", reviewed, want)
	}
	counts := c.SkippedCounts()
	if counts[ReasonVendored] != 3 || counts[ReasonLockFile] != 2 || counts[ReasonBinary] != 1 {
		t.Errorf("counts = %v", counts)
	}
	for _, s := range c.Skipped {
		if s.File.Path() == "logo.png" && (!s.File.Binary || len(s.File.Hunks) != 0) {
			t.Errorf("logo.png: binary %v with %d hunks", s.File.Binary, len(s.File.Hunks))
		}
	}
}

func TestLocalReadFile(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	r.write("a.txt", "old\n")
	r.write("dir/b.txt", "b\n")
	r.write("dir/with space.txt", "s\n")
	base := r.commit("base")
	r.write("a.txt", "new\n")
	r.write("big.txt", strings.Repeat("x", 2000))
	r.commit("head")
	// The work tree differs from head: reads come from git, not the disk.
	r.write("a.txt", "uncommitted\n")

	src := &Local{Dir: r.dir, MaxFileSize: 1000}
	c, err := src.Change(t.Context(), Ref{Base: base})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if got, err := c.ReadFile(ctx, "a.txt"); err != nil || string(got) != "new\n" {
		t.Errorf("ReadFile(a.txt) = %q, %v; want %q", got, err, "new\n")
	}
	if got, err := c.ReadFileAt(ctx, c.BaseSHA, "a.txt"); err != nil || string(got) != "old\n" {
		t.Errorf("ReadFileAt(base, a.txt) = %q, %v; want %q", got, err, "old\n")
	}
	for p, want := range map[string]string{"dir/b.txt": "b\n", "dir/with space.txt": "s\n"} {
		if got, err := c.ReadFile(ctx, p); err != nil || string(got) != want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
	for _, p := range []string{"missing.txt", "no such file.txt"} {
		if _, err := c.ReadFile(ctx, p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadFile(%q) error = %v, want fs.ErrNotExist", p, err)
		}
	}
	if _, err := c.ReadFileAt(ctx, c.BaseSHA, "big.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFileAt(base, big.txt) error = %v, want fs.ErrNotExist", err)
	}
	if _, err := c.ReadFile(ctx, "big.txt"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile(big.txt) error = %v, want ErrTooLarge", err)
	}
	if _, err := c.ReadFile(ctx, "dir"); err == nil {
		t.Error("ReadFile(dir) succeeded on a directory")
	}
	for _, p := range []string{"../a.txt", "/etc/passwd", "", "dir/../a.txt", "a.txt\nHEAD:a.txt"} {
		if _, err := c.ReadFile(ctx, p); err == nil {
			t.Errorf("ReadFile(%q) succeeded", p)
		}
	}
}

func TestLocalDefaultBase(t *testing.T) {
	t.Parallel()
	for _, branch := range []string{"main", "master"} {
		t.Run(branch, func(t *testing.T) {
			t.Parallel()
			r := newTestRepo(t)
			r.git("checkout", "-q", "-b", branch)
			r.write("a.txt", "a\n")
			r.commit("a")
			r.write("b.txt", "b\n")
			fork := r.commit("b")
			r.git("checkout", "-q", "-b", "feature")
			r.write("feature.txt", "f\n")
			head := r.commit("feature")
			// The default branch moves on after the fork; its change must
			// not show up in the feature's review.
			r.git("checkout", "-q", branch)
			r.write("later.txt", "later\n")
			r.commit("later")
			r.git("checkout", "-q", "feature")

			c, err := NewLocal(r.dir).Change(t.Context(), Ref{})
			if err != nil {
				t.Fatal(err)
			}
			if c.BaseSHA != fork || c.HeadSHA != head {
				t.Errorf("base, head = %s, %s; want merge-base %s, HEAD %s", c.BaseSHA, c.HeadSHA, fork, head)
			}
			if len(c.Files) != 1 || c.Files[0].Path() != "feature.txt" {
				t.Errorf("files = %v, want only feature.txt", c.Files)
			}
		})
	}
	t.Run("origin HEAD first", func(t *testing.T) {
		t.Parallel()
		r := newTestRepo(t)
		r.write("a.txt", "a\n")
		first := r.commit("a")
		r.write("b.txt", "b\n")
		r.commit("b")
		// origin/HEAD points at an older commit than main: it wins.
		r.git("update-ref", "refs/remotes/origin/trunk", first)
		r.git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
		c, err := NewLocal(r.dir).Change(t.Context(), Ref{})
		if err != nil {
			t.Fatal(err)
		}
		if c.BaseSHA != first {
			t.Errorf("base = %s, want origin/HEAD %s", c.BaseSHA, first)
		}
	})
	t.Run("no default branch", func(t *testing.T) {
		t.Parallel()
		r := newTestRepo(t)
		r.git("checkout", "-q", "-b", "trunk")
		r.write("a.txt", "a\n")
		r.commit("a")
		if _, err := NewLocal(r.dir).Change(t.Context(), Ref{}); !errors.Is(err, ErrInvalidRef) {
			t.Errorf("error = %v, want ErrInvalidRef", err)
		}
	})
}

func TestLocalRejectsBadRefs(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	r.write("a.txt", "a\n")
	r.commit("a")
	marker := filepath.Join(t.TempDir(), "written")
	src := NewLocal(r.dir)
	for _, ref := range []Ref{
		{Head: "--output=" + marker},
		{Base: "--output=" + marker, Head: "HEAD"},
		{Base: "HEAD", Head: "-p"},
		{Base: "HEAD", Head: "no-such-branch"},
		{Base: "HEAD", Head: "HEAD:a.txt"},
		{Base: "HEAD", Head: "HEAD^{tree}"},
	} {
		if _, err := src.Change(t.Context(), ref); !errors.Is(err, ErrInvalidRef) {
			t.Errorf("Change(%+v) error = %v, want ErrInvalidRef", ref, err)
		}
	}
	if _, err := src.ReadFileAt(t.Context(), "--output="+marker, "a.txt"); !errors.Is(err, ErrInvalidRef) {
		t.Errorf("ReadFileAt(option) error = %v, want ErrInvalidRef", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an option-like ref reached git: %s exists (%v)", marker, err)
	}
}

// TestLocalRunsNothingFromTheRepository arms traps in the repository's own
// configuration, checks with plain git that each one fires, then checks
// that building and reading a change fires none.
func TestLocalRunsNothingFromTheRepository(t *testing.T) {
	t.Parallel()
	for _, trap := range []struct {
		name    string
		config  [][2]string
		attrs   string
		control []string // a plain git command that springs the trap
	}{
		{name: "fsmonitor", config: [][2]string{{"core.fsmonitor", "SCRIPT"}}, control: []string{"status"}},
		{name: "external diff", config: [][2]string{{"diff.external", "SCRIPT"}}, control: []string{"diff", "HEAD~1", "HEAD"}},
		{name: "diff driver", config: [][2]string{{"diff.evil.command", "SCRIPT"}}, attrs: "*.txt diff=evil\n", control: []string{"diff", "HEAD~1", "HEAD"}},
		{name: "textconv", config: [][2]string{{"diff.evil.textconv", "SCRIPT"}}, attrs: "*.txt diff=evil\n", control: []string{"diff", "HEAD~1", "HEAD"}},
	} {
		t.Run(trap.name, func(t *testing.T) {
			t.Parallel()
			r := newTestRepo(t)
			marker := filepath.Join(t.TempDir(), "sprung")
			script := filepath.Join(t.TempDir(), "trap.sh")
			if err := sandbox.WriteExecutable(script, []byte("#!/bin/sh\ntouch '"+marker+"'\ncat >/dev/null 2>&1\necho trapped\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			if trap.attrs != "" {
				r.write(".gitattributes", trap.attrs)
			}
			r.write("a.txt", "a\n")
			base := r.commit("base")
			r.write("a.txt", "b\n")
			r.commit("head")
			for _, kv := range trap.config {
				r.git("config", kv[0], strings.ReplaceAll(kv[1], "SCRIPT", script))
			}

			control := make([]string, len(trap.control))
			for i, a := range trap.control {
				control[i] = strings.ReplaceAll(a, "SCRIPT", script)
			}
			r.git(control...)
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("the trap did not fire for plain git %v: %v", control, err)
			}
			if err := os.Remove(marker); err != nil {
				t.Fatal(err)
			}

			src := NewLocal(r.dir)
			c, err := src.Change(t.Context(), Ref{Base: base})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ReadFile(t.Context(), "a.txt"); err != nil {
				t.Fatal(err)
			}
			// Local itself never reads the work tree, where fsmonitor
			// works; its runner must stay safe for a command that does.
			if _, err := src.run(t.Context(), 1<<20, "status", "--porcelain"); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the repository's %s ran (%v)", trap.name, err)
			}
			f := fileByPath(t, c, "a.txt")
			if got := f.AddedLines(); !slices.Equal(got, []int{1}) || f.Hunks[0].Lines[1].Text != "b" {
				t.Errorf("diff of a.txt is not git's own: %+v", f.Hunks)
			}
		})
	}
}

// TestLocalIgnoresReplaceRefs: refs/replace in the repository cannot make
// a commit show another commit's contents.
func TestLocalIgnoresReplaceRefs(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	r.write("a.txt", "a\n")
	base := r.commit("base")
	r.write("a.txt", "innocent\n")
	decoy := r.commit("decoy")
	r.git("reset", "-q", "--hard", base)
	r.write("a.txt", "real\n")
	head := r.commit("head")
	r.git("replace", head, decoy)
	if out := r.git("show", head+":a.txt"); out != "innocent" {
		t.Fatalf("plain git does not honour the replace ref: %q", out)
	}

	c, err := NewLocal(r.dir).Change(t.Context(), Ref{Base: base, Head: head})
	if err != nil {
		t.Fatal(err)
	}
	f := fileByPath(t, c, "a.txt")
	if got := f.Hunks[0].Lines[1].Text; got != "real" {
		t.Errorf("added line = %q, want the head commit's own %q", got, "real")
	}
	if data, err := c.ReadFile(t.Context(), "a.txt"); err != nil || string(data) != "real\n" {
		t.Errorf("ReadFile = %q, %v; want %q", data, err, "real\n")
	}
}

// TestLocalAttributeCannotHideCode: a change that marks its code binary in
// .gitattributes still has that code reviewed as text.
func TestLocalAttributeCannotHideCode(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	r.write("a.go", "package a\n")
	r.write("img.bin", "\x00\x01\x02")
	base := r.commit("base")
	r.write(".gitattributes", "*.go -diff\n*.bin -diff\n")
	r.write("a.go", "package a\n\nvar key = \"hidden\"\n")
	r.write("img.bin", "\x00\x01\x03")
	r.commit("head")
	if out := r.git("diff", base, "HEAD", "--", "a.go"); !strings.Contains(out, "Binary files") {
		t.Fatalf("plain git does not call a.go binary:\n%s", out)
	}

	c, err := NewLocal(r.dir).Change(t.Context(), Ref{Base: base})
	if err != nil {
		t.Fatal(err)
	}
	f := fileByPath(t, c, "a.go")
	if f.Binary || !slices.Equal(f.AddedLines(), []int{2, 3}) {
		t.Errorf("a.go: binary %v, added %v; want text with lines 2, 3 added", f.Binary, f.AddedLines())
	}
	if len(c.Skipped) != 1 || c.Skipped[0].File.Path() != "img.bin" || c.Skipped[0].Reason != ReasonBinary {
		t.Errorf("skipped = %+v, want img.bin as binary", c.Skipped)
	}
}

func TestLocalLimits(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	r.write("a.txt", "a\n")
	base := r.commit("a")
	r.write("a.txt", strings.Repeat("line\n", 1000))
	r.commit("b")

	src := &Local{Dir: r.dir, MaxDiffSize: 1000}
	if _, err := src.Change(t.Context(), Ref{Base: base}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("diff over the limit: error = %v, want ErrTooLarge", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := NewLocal(r.dir).Change(ctx, Ref{Base: base}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: error = %v, want context.Canceled", err)
	}
	if _, err := NewLocal(t.TempDir()).Change(t.Context(), Ref{}); err == nil {
		t.Error("Change in a directory that is no repository succeeded")
	}
}
