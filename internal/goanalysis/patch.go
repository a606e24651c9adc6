package goanalysis

import (
	"errors"
	"fmt"
	"go/token"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/quorum-review/quorum/internal/udiff"
)

// patch turns a suggested fix's edits into a unified diff against head
// that git apply accepts; edits outside the repository make it fail.
func (p *Program) patch(fset *token.FileSet, edits []analysis.TextEdit) (string, error) {
	byPath := map[string][]udiff.Edit{}
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
		byPath[path] = append(byPath[path], udiff.Edit{Start: tf.Offset(te.Pos), End: tf.Offset(end), Text: string(te.NewText)})
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
		d, err := udiff.Unified(path, old, byPath[path])
		if err != nil {
			return "", err
		}
		b.WriteString(d)
	}
	return b.String(), nil
}
