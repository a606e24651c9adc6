package goanalysis

import (
	"errors"
	"fmt"
	"go/token"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// patchContext is how many unchanged lines surround each change, as git
// prints them.
const patchContext = 3

// edit replaces old[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// patch turns a suggested fix's edits into a unified diff against head
// that git apply accepts; edits outside the repository make it fail.
func (p *Program) patch(fset *token.FileSet, edits []analysis.TextEdit) (string, error) {
	byPath := map[string][]edit{}
	for _, te := range edits {
		tf := fset.File(te.Pos)
		if tf == nil {
			return "", errors.New("edit in an unknown file")
		}
		path, ok := p.RepoPath(tf.Name())
		if !ok {
			return "", errors.New("edit outside the repository")
		}
		end := te.End
		if !end.IsValid() {
			end = te.Pos
		}
		byPath[path] = append(byPath[path], edit{start: tf.Offset(te.Pos), end: tf.Offset(end), text: string(te.NewText)})
	}
	paths := make([]string, 0, len(byPath))
	for path := range byPath {
		paths = append(paths, path)
	}
	slices.Sort(paths)
	var b strings.Builder
	for _, path := range paths {
		old, ok := p.head[path]
		if !ok {
			return "", fmt.Errorf("%s was not read from head", path)
		}
		d, err := unifiedDiff(path, old, byPath[path])
		if err != nil {
			return "", err
		}
		b.WriteString(d)
	}
	return b.String(), nil
}

// unifiedDiff returns the unified diff, with git's a/ and b/ prefixes, of
// applying edits (byte offsets into old) to old; empty when they change
// nothing.
func unifiedDiff(path string, old []byte, edits []edit) (string, error) {
	edits = slices.Clone(edits)
	slices.SortStableFunc(edits, func(a, b edit) int { return a.start - b.start })
	for i, e := range edits {
		if e.start < 0 || e.end < e.start || e.end > len(old) {
			return "", fmt.Errorf("edit %d..%d out of range", e.start, e.end)
		}
		if i > 0 && e.start < edits[i-1].end {
			return "", errors.New("overlapping edits")
		}
	}

	// Line starts of old: lineStart[i] is the offset of line i (0-based);
	// a final entry is len(old).
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
	lineStart = append(lineStart, len(old))
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
		from := lineOf(edits[i].start)
		to := lineOf(max(edits[i].end-1, edits[i].start)) + 1
		if edits[i].end == edits[i].start && edits[i].start == len(old) && nLines > 0 && old[len(old)-1] == '\n' {
			// An insertion at the very end of a file ending in a newline
			// adds lines after the last one.
			from, to = nLines, nLines
		}
		j := i + 1
		for j < len(edits) && lineOf(edits[j].start) < to {
			to = max(to, lineOf(max(edits[j].end-1, edits[j].start))+1)
			j++
		}
		to = min(to, nLines)
		s, e := lineStart[min(from, nLines)], lineStart[to]
		var nt strings.Builder
		at := s
		for _, ed := range edits[i:j] {
			nt.Write(old[at:ed.start])
			nt.WriteString(ed.text)
			at = ed.end
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
