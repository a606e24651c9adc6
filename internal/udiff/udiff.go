// Package udiff writes unified diffs that git apply accepts, from edits
// of a file's bytes: the suggested patches of findings.
package udiff

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// patchContext is how many unchanged lines surround each change, as git
// prints them.
const patchContext = 3

// Edit replaces old[Start:End] with Text.
type Edit struct {
	Start, End int
	Text       string
}

// Unified returns the unified diff, with git's a/ and b/ prefixes, of
// applying edits (byte offsets into old) to old; empty when they change
// nothing.
func Unified(path string, old []byte, edits []Edit) (string, error) {
	return NewFile(old).Unified(path, edits)
}

// File is a file's bytes with where its lines start, for writing many
// patches of one file in time that grows with each patch, not the file.
type File struct {
	old []byte
	// lineStart[i] is the offset of line i (0-based); a final entry is
	// len(old).
	lineStart []int
	nLines    int
}

// NewFile indexes old's lines.
func NewFile(old []byte) *File {
	lineStart := []int{0}
	for i, c := range old {
		if c == '\n' && i+1 < len(old) {
			lineStart = append(lineStart, i+1)
		}
	}
	nLines := len(lineStart)
	if len(old) == 0 {
		nLines = 0
	}
	return &File{old: old, lineStart: append(lineStart, len(old)), nLines: nLines}
}

// Unified returns the unified diff of applying edits to the file, as the
// function Unified does.
func (f *File) Unified(path string, edits []Edit) (string, error) {
	old, lineStart, nLines := f.old, f.lineStart, f.nLines
	edits = slices.Clone(edits)
	slices.SortStableFunc(edits, func(a, b Edit) int { return a.Start - b.Start })
	for i, e := range edits {
		if e.Start < 0 || e.End < e.Start || e.End > len(old) {
			return "", fmt.Errorf("edit %d..%d out of range", e.Start, e.End)
		}
		if i > 0 && e.Start < edits[i-1].End {
			return "", errors.New("overlapping edits")
		}
	}

	lineOf := func(off int) int {
		i, found := slices.BinarySearch(lineStart[:max(nLines, 1)], off)
		if found {
			return i
		}
		return i - 1
	}

	// Regions: runs of whole old lines [from, to) that edits touch, with
	// the text that replaces them.
	type region struct {
		from, to int
		newText  string
	}
	var regions []region
	for i := 0; i < len(edits); {
		from := lineOf(edits[i].Start)
		to := lineOf(max(edits[i].End-1, edits[i].Start)) + 1
		if edits[i].End == edits[i].Start && edits[i].Start == len(old) && nLines > 0 && old[len(old)-1] == '\n' {
			// An insertion at the very end of a file ending in a newline
			// adds lines after the last one.
			from, to = nLines, nLines
		}
		j := i + 1
		for j < len(edits) && lineOf(edits[j].Start) < to {
			to = max(to, lineOf(max(edits[j].End-1, edits[j].Start))+1)
			j++
		}
		to = min(to, nLines)
		s, e := lineStart[min(from, nLines)], lineStart[to]
		var nt strings.Builder
		at := s
		for _, ed := range edits[i:j] {
			nt.Write(old[at:ed.Start])
			nt.WriteString(ed.Text)
			at = ed.End
		}
		nt.Write(old[at:e])
		if nt.String() != string(old[s:e]) {
			regions = append(regions, region{from: from, to: to, newText: nt.String()})
		}
		i = j
	}
	if len(regions) == 0 {
		return "", nil
	}

	oldLine := func(i int) string { return string(old[lineStart[i]:lineStart[i+1]]) }
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", path, path, path, path)
	writeLine := func(body *strings.Builder, mark byte, line string) {
		body.WriteByte(mark)
		body.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			body.WriteString("\n\\ No newline at end of file\n")
		}
	}
	delta := 0
	for i := 0; i < len(regions); {
		// A hunk takes every region whose context touches the previous one.
		j := i + 1
		for j < len(regions) && regions[j].from-patchContext <= regions[j-1].to+patchContext {
			j++
		}
		start := max(0, regions[i].from-patchContext)
		end := min(nLines, regions[j-1].to+patchContext)
		var body strings.Builder
		oldCount, newCount := 0, 0
		at := start
		for _, r := range regions[i:j] {
			for ; at < r.from; at++ {
				writeLine(&body, ' ', oldLine(at))
				oldCount++
				newCount++
			}
			for ; at < r.to; at++ {
				writeLine(&body, '-', oldLine(at))
				oldCount++
			}
			for _, nl := range splitLines(r.newText) {
				writeLine(&body, '+', nl)
				newCount++
			}
		}
		for ; at < end; at++ {
			writeLine(&body, ' ', oldLine(at))
			oldCount++
			newCount++
		}
		oldStart, newStart := start+1, start+1+delta
		if oldCount == 0 {
			oldStart--
		}
		if newCount == 0 {
			newStart--
		}
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", oldStart, oldCount, newStart, newCount)
		b.WriteString(body.String())
		delta += newCount - oldCount
		i = j
	}
	return b.String(), nil
}

// splitLines splits s after each newline; a last line without one is kept.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}
