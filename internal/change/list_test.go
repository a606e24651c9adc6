package change

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"testing"
)

func TestListFiles(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	r.write("go.mod", "module example.com/m\n")
	r.write("pkg/a.go", "package pkg\n")
	r.write("pkg/a_test.go", "package pkg\n")
	r.write("pkg/sub/b.go", "package sub\n")
	base := r.commit("base")
	r.write("pkg/c.go", "package pkg\n")
	head := r.commit("head")

	ctx := context.Background()
	c, err := NewLocal(r.dir).Change(ctx, Ref{Base: base, Head: head})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rev, dir string
		want     []string
	}{
		{base, "pkg", []string{"pkg/a.go", "pkg/a_test.go"}},
		{head, "pkg/", []string{"pkg/a.go", "pkg/a_test.go", "pkg/c.go"}},
		{head, "", []string{"go.mod"}},
		{head, "pkg/sub", []string{"pkg/sub/b.go"}},
	} {
		got, err := c.ListFiles(ctx, tc.rev, tc.dir)
		if err != nil {
			t.Fatalf("ListFiles(%s, %q): %v", short(tc.rev), tc.dir, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ListFiles(%s, %q) = %q, want %q", short(tc.rev), tc.dir, got, tc.want)
		}
	}
	all, err := c.ListTree(ctx, head)
	if want := []string{"go.mod", "pkg/a.go", "pkg/a_test.go", "pkg/c.go", "pkg/sub/b.go"}; err != nil || !slices.Equal(all, want) {
		t.Errorf("ListTree(head) = %q, %v; want %q", all, err, want)
	}
	if _, err := (&Change{}).ListTree(ctx, head); !errors.Is(err, ErrNoListing) {
		t.Errorf("ListTree without a lister: err = %v, want ErrNoListing", err)
	}
	if _, err := c.ListFiles(ctx, head, "nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: err = %v, want fs.ErrNotExist", err)
	}
	if _, err := c.ListFiles(ctx, head, "pkg/a.go"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a file as directory: err = %v, want fs.ErrNotExist", err)
	}
	if _, err := c.ListFiles(ctx, "--output=/tmp/x", "pkg"); err == nil {
		t.Errorf("an option-like revision was accepted")
	}
	if _, err := c.ListFiles(ctx, head, "../etc"); err == nil {
		t.Errorf("a path outside the repository was accepted")
	}
	if _, err := (&Change{}).ListFiles(ctx, head, "pkg"); !errors.Is(err, ErrNoListing) {
		t.Errorf("a change without a lister: err = %v, want ErrNoListing", err)
	}
}
