package change

import (
	"fmt"
	"io"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// ParseDiff parses a unified diff as git prints it (with "a/" and "b/"
// prefixes) into files, numbering every line.
func ParseDiff(r io.Reader) ([]*File, error) {
	parsed, _, err := gitdiff.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("parse diff: %w", err)
	}
	files := make([]*File, 0, len(parsed))
	for _, p := range parsed {
		f, err := fromGitdiff(p)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

func fromGitdiff(p *gitdiff.File) (*File, error) {
	f := &File{
		OldPath: p.OldName,
		NewPath: p.NewName,
		Binary:  p.IsBinary,
		OldMode: uint32(p.OldMode),
		NewMode: uint32(p.NewMode),
		Hunks:   make([]Hunk, 0, len(p.TextFragments)),
	}
	switch {
	case p.IsNew:
		f.Status, f.OldPath = StatusAdded, ""
	case p.IsDelete:
		f.Status, f.NewPath = StatusDeleted, ""
	case p.IsRename:
		f.Status = StatusRenamed
	case p.IsCopy:
		f.Status = StatusCopied
	default:
		f.Status = StatusModified
	}
	// An unchanged mode is printed once, on the index line, and gitdiff
	// keeps it as the old mode only.
	if f.NewMode == 0 && f.Status != StatusDeleted {
		f.NewMode = f.OldMode
	}
	for _, frag := range p.TextFragments {
		h := Hunk{
			OldStart: int(frag.OldPosition),
			OldLines: int(frag.OldLines),
			NewStart: int(frag.NewPosition),
			NewLines: int(frag.NewLines),
			Section:  frag.Comment,
			Lines:    make([]Line, 0, len(frag.Lines)),
		}
		old, cur := h.OldStart, h.NewStart
		for _, l := range frag.Lines {
			line := Line{Text: strings.TrimSuffix(l.Line, "\n")}
			switch l.Op {
			case gitdiff.OpAdd:
				line.Kind, line.NewNumber = KindAdded, cur
				cur++
			case gitdiff.OpDelete:
				line.Kind, line.OldNumber = KindDeleted, old
				old++
			case gitdiff.OpContext:
				line.Kind, line.OldNumber, line.NewNumber = KindContext, old, cur
				old++
				cur++
			default:
				return nil, fmt.Errorf("parse diff: %s: unknown line operation %v", f.Path(), l.Op)
			}
			h.Lines = append(h.Lines, line)
		}
		f.Hunks = append(f.Hunks, h)
	}
	return f, nil
}
