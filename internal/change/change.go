// Package change owns the change model: what a pull request changes (base
// and head commits, the parsed unified diff, the files skipped and why) and
// read access to the repository's files at those commits, so specialists can
// review a change without checking anything out or running anything from it.
//
// A Change is read-only once built: specialists may use one concurrently.
package change

import (
	"context"
	"errors"
	"sort"
)

// ErrTooLarge is returned when a file or a diff is larger than the source
// agrees to read.
var ErrTooLarge = errors.New("too large")

// Status says what a change did to a file.
type Status string

// File statuses, as git names them.
const (
	StatusAdded    Status = "added"
	StatusModified Status = "modified"
	StatusDeleted  Status = "deleted"
	StatusRenamed  Status = "renamed"
	StatusCopied   Status = "copied"
)

// Kind says whether a diff line was added, deleted, or is unchanged context.
type Kind string

// Line kinds.
const (
	KindAdded   Kind = "added"
	KindDeleted Kind = "deleted"
	KindContext Kind = "context"
)

// Tree reads files of the repository a change belongs to, at any revision
// of it. Sources implement it; Change uses it for ReadFile.
type Tree interface {
	// ReadFileAt returns the contents of path at rev. A missing path is an
	// error wrapping fs.ErrNotExist; a file larger than the source reads is
	// an error wrapping ErrTooLarge.
	ReadFileAt(ctx context.Context, rev, path string) ([]byte, error)
}

// Change is one pull request's change: what a review looks at.
//
// Files holds every file the specialists review, deleted files included:
// a deletion is a change (a test removed, an assertion dropped), and a
// deleted file has no added lines, so line-based checks pass over it
// naturally. Files that are not worth reviewing (binary, vendored,
// generated, lock files, minified assets, submodules, symbolic links) are
// in Skipped instead, each with its reason, whatever their status.
type Change struct {
	// Owner, Repo and PRNumber identify the pull request; for a local
	// repository they are whatever the caller said, and PRNumber may be 0.
	Owner    string
	Repo     string
	PRNumber int

	// BaseSHA and HeadSHA are the full object names of the commits compared.
	BaseSHA string
	HeadSHA string

	Files   []*File
	Skipped []Skipped

	tree Tree
}

// New builds a change from files parsed from the diff of base to head,
// moving those not worth reviewing into Skipped. It reads files at head
// through tree, to recognise generated code, and keeps tree for ReadFile.
func New(ctx context.Context, ref Ref, base, head string, files []*File, tree Tree) (*Change, error) {
	c := &Change{
		Owner:    ref.Owner,
		Repo:     ref.Repo,
		PRNumber: ref.PRNumber,
		BaseSHA:  base,
		HeadSHA:  head,
		Files:    []*File{},
		Skipped:  []Skipped{},
		tree:     tree,
	}
	for _, f := range files {
		reason, err := classify(ctx, f, head, tree)
		if err != nil {
			return nil, err
		}
		if reason == "" {
			c.Files = append(c.Files, f)
			continue
		}
		c.Skipped = append(c.Skipped, Skipped{File: f, Reason: reason})
	}
	return c, nil
}

// ReadFile returns the contents of path at the head commit.
func (c *Change) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return c.ReadFileAt(ctx, c.HeadSHA, path)
}

// ReadFileAt returns the contents of path at rev, usually BaseSHA or HeadSHA.
func (c *Change) ReadFileAt(ctx context.Context, rev, path string) ([]byte, error) {
	if c.tree == nil {
		return nil, errors.New("change has no tree to read from")
	}
	return c.tree.ReadFileAt(ctx, rev, path)
}

// Lister lists a directory of the repository at a revision. Sources whose
// trees can do so implement it; Change.ListFiles uses it.
type Lister interface {
	// ListFiles returns the paths, from the repository's root, of the
	// files directly in dir ("" for the root) at rev. A directory that does
	// not exist at rev is an error wrapping fs.ErrNotExist.
	ListFiles(ctx context.Context, rev, dir string) ([]string, error)
	// ListTree returns the paths of every file at rev.
	ListTree(ctx context.Context, rev string) ([]string, error)
}

// ErrNoListing means the change's source cannot list directories.
var ErrNoListing = errors.New("the change's source cannot list directories")

// ListFiles lists the files directly in dir at rev, when the change's source
// can (ErrNoListing otherwise).
func (c *Change) ListFiles(ctx context.Context, rev, dir string) ([]string, error) {
	l, ok := c.tree.(Lister)
	if !ok {
		return nil, ErrNoListing
	}
	return l.ListFiles(ctx, rev, dir)
}

// ListTree lists every file at rev, when the change's source can
// (ErrNoListing otherwise).
func (c *Change) ListTree(ctx context.Context, rev string) ([]string, error) {
	l, ok := c.tree.(Lister)
	if !ok {
		return nil, ErrNoListing
	}
	return l.ListTree(ctx, rev)
}

// SkippedCounts returns how many files were skipped for each reason, for
// the review's summary.
func (c *Change) SkippedCounts() map[Reason]int {
	n := map[Reason]int{}
	for _, s := range c.Skipped {
		n[s.Reason]++
	}
	return n
}

// File is one file's part of the diff.
type File struct {
	// OldPath is the path at base and NewPath the path at head; an added
	// file has an empty OldPath and a deleted one an empty NewPath.
	OldPath string
	NewPath string
	Status  Status
	// Binary files have no hunks.
	Binary bool
	// OldMode and NewMode are git's file modes (0100644, 0100755, 0120000
	// for a symbolic link, 0160000 for a submodule); 0 where absent.
	OldMode uint32
	NewMode uint32
	Hunks   []Hunk
}

// Path returns the file's path at head, or at base for a deleted file: the
// path a finding on the file names.
func (f *File) Path() string {
	if f.Status == StatusDeleted {
		return f.OldPath
	}
	return f.NewPath
}

// AddedLines returns the new-file numbers of the lines the change added or
// modified (in a unified diff a modified line is a deletion and an
// addition), in ascending order.
func (f *File) AddedLines() []int {
	var lines []int
	for i := range f.Hunks {
		for _, l := range f.Hunks[i].Lines {
			if l.Kind == KindAdded {
				lines = append(lines, l.NewNumber)
			}
		}
	}
	return lines
}

// Changed reports whether the change added or modified line (a new-file
// line number): the lines findings may be reported on.
func (f *File) Changed(line int) bool {
	h := f.HunkFor(line)
	if h == nil {
		return false
	}
	for _, l := range h.Lines {
		if l.NewNumber == line {
			return l.Kind == KindAdded
		}
	}
	return false
}

// AnyIn reports whether added (as AddedLines returns it, ascending) holds
// a line from line to end, both included, in time that does not grow with
// the range: a report may span a whole file.
func AnyIn(added []int, line, end int) bool {
	i, _ := sort.Find(len(added), func(i int) int { return line - added[i] })
	return i < len(added) && added[i] <= end
}

// HunkFor returns the hunk whose new-file range holds line, or nil when the
// line lies outside every hunk. Inline comments on a platform can only be
// placed on lines inside a hunk.
func (f *File) HunkFor(line int) *Hunk {
	// Hunks are in ascending order and do not overlap.
	i := sort.Search(len(f.Hunks), func(i int) bool {
		h := &f.Hunks[i]
		return h.NewStart+h.NewLines > line
	})
	if i == len(f.Hunks) {
		return nil
	}
	h := &f.Hunks[i]
	if line < h.NewStart || line >= h.NewStart+h.NewLines {
		return nil
	}
	return h
}

// Hunk is one "@@ -OldStart,OldLines +NewStart,NewLines @@" section of a
// file's diff.
type Hunk struct {
	OldStart int
	OldLines int
	NewStart int
	NewLines int
	// Section is the text git prints after the second "@@", usually the
	// enclosing function's first line.
	Section string
	Lines   []Line
}

// Line is one line of a hunk.
type Line struct {
	Kind Kind
	// Text is the line without its diff marker and without its trailing
	// newline (a carriage return of a CRLF file stays).
	Text string
	// OldNumber is the line's number at base (0 for an added line);
	// NewNumber its number at head (0 for a deleted line).
	OldNumber int
	NewNumber int
}

// Reason says why a file was skipped.
type Reason string

// Reasons a file is skipped by default.
const (
	ReasonBinary    Reason = "binary"
	ReasonVendored  Reason = "vendored"
	ReasonGenerated Reason = "generated"
	ReasonLockFile  Reason = "lock_file"
	ReasonMinified  Reason = "minified"
	ReasonSubmodule Reason = "submodule"
	ReasonSymlink   Reason = "symlink"
)

// Skipped is a file of the diff that is not reviewed, and why. The File is
// kept whole, so a later stage (repository configuration, say) can choose
// to review it after all.
type Skipped struct {
	File   *File
	Reason Reason
}

// Ref names the change a Source should fetch.
type Ref struct {
	// Owner, Repo and PRNumber identify the pull request; a local source
	// copies them into the Change as given.
	Owner    string
	Repo     string
	PRNumber int
	// Base and Head are revisions; empty means the source's default (for
	// Local: head is HEAD, base the merge-base of head with the default
	// branch).
	Base string
	Head string
}

// Source is a code-hosting platform, as far as fetching changes goes.
// Posting reviews and comments comes with the platform integrations.
type Source interface {
	// Change fetches the change ref names.
	Change(ctx context.Context, ref Ref) (*Change, error)
}
