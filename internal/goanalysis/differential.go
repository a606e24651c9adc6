package goanalysis

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/quorum-review/quorum/internal/change"
)

// A review reports what the change introduced. The analyzers run on the
// changed packages at head; a diagnostic there is a candidate when it lies
// on a line the change added, or anywhere in a function the change
// touched (a deleted `defer cancel()` makes lostcancel speak on the
// unchanged `ctx, cancel :=` line). The candidates in files that existed
// at base are then looked for among the same analyzers' diagnostics on the
// same packages at base, by content (analyzer, path across renames, the
// message without numbers, the flagged line's text), and those found there
// are dropped: the change did not introduce them. The base is loaded only
// when there is a candidate whose flagged line's text the base file has
// (any other cannot match), only for the packages holding one, and once
// per change for all specialists.

// candidate is a head diagnostic that may be new, with what in the change
// caused it when it lies off the added lines.
type candidate struct {
	Diagnostic
	cause string
	// checkBase says the base must be asked: the flagged line's text is
	// in the base file too.
	checkBase bool
	// needTyped says the candidate stands only where the base package
	// type-checked (a type error).
	needTyped bool
}

// introduced keeps the diagnostics ds the change introduced (see above);
// each off the added lines carries its cause. all are every diagnostic
// of the analyzers at head, ds among them: the base's are matched against
// all of them, so a twin the specialist does not report (a classification
// that needs the change's own evidence) still answers for its own.
func (l *Loader) introduced(ctx context.Context, c *change.Change, p *Program, ds, all []Diagnostic) ([]candidate, error) {
	files := map[string]*change.File{}
	for _, f := range c.Files {
		if f.NewPath != "" && f.Status != change.StatusDeleted {
			files[f.NewPath] = f
		}
	}
	var cands []candidate
	needBase := map[string]bool{} // base paths of files with candidates
	// A diagnostic is matched with base by its function's name and its
	// flagged line's text (diagnosticKey): one on a line whose text the
	// base file does not have in a function of that name is new for
	// certain, and needs no base to tell.
	baseLines := map[string]map[string]bool{}
	atBaseText := func(f *change.File, fn, line string) (bool, error) {
		lines, ok := baseLines[f.OldPath]
		if !ok {
			b, err := c.ReadFileAt(ctx, c.BaseSHA, f.OldPath)
			if err != nil {
				return true, nil // unreadable: let the base load say
			}
			lines = funcLines(b)
			baseLines[f.OldPath] = lines
		}
		if lines == nil {
			return true, nil // does not parse: let the base load say
		}
		return lines[fn+"\x00"+strings.Join(strings.Fields(line), " ")], nil
	}
	for _, d := range ds {
		f := files[d.Path]
		if f == nil {
			continue
		}
		cd := candidate{Diagnostic: d}
		if !changedRange(f, d.Line, d.EndLine) {
			cd.cause = p.causeAt(f, d.Line, "this function")
			// A place the analyzer names with the problem (a caller
			// that no longer checks) may be where the change is.
			for _, r := range d.Related {
				if cd.cause != "" {
					break
				}
				if rf := files[r.Path]; rf != nil {
					cd.cause = p.causeAt(rf, r.Line, p.funcName(r.Path, r.Line)+" (which leads here)")
				}
			}
			if cd.cause == "" {
				continue
			}
		}
		if d.Analyzer == TypeCheck {
			// A type error is the change's only where the same package
			// type-checked here at base: otherwise it is more likely the
			// review's environment (a build tag, a dependency offline)
			// than code that does not compile.
			if f.OldPath == "" || f.Status == change.StatusAdded {
				continue
			}
			cd.checkBase, cd.needTyped = true, true
			needBase[f.OldPath] = true
			cands = append(cands, cd)
			continue
		}
		if f.OldPath != "" && f.Status != change.StatusAdded {
			there, err := atBaseText(f, p.funcName(d.Path, d.Line), p.lineText(d.Path, d.Line))
			if err != nil {
				return nil, err
			}
			if there {
				cd.checkBase = true
				needBase[f.OldPath] = true
			}
		}
		cands = append(cands, cd)
	}
	if len(needBase) == 0 {
		return cands, nil
	}
	base, err := l.loadBase(ctx, c, needBase)
	if err != nil {
		return nil, err
	}
	newPath := map[string]string{}
	for _, f := range c.Files {
		if f.OldPath != "" && f.NewPath != "" {
			newPath[f.OldPath] = f.NewPath
		}
	}
	// Where the base cannot be compared with (its package did not
	// type-check there), what head reports on the added lines stands, and
	// what it reports elsewhere is not claimed as the change's.
	// A type error needs the base package fully typed (typed); other
	// findings a base the analyzers ran on, partly typed or not.
	comparable, typed := map[string]bool{}, map[string]bool{}
	var bds []Diagnostic
	if base != nil && len(base.Packages)+len(base.Partial)+len(base.Repaired) > 0 {
		for i, pkg := range slices.Concat(base.Packages, base.Partial, base.Repaired) {
			for _, f := range pkg.CompiledGoFiles {
				if rp, ok := base.RepoPath(f); ok {
					comparable[newPath[rp]] = true
					typed[newPath[rp]] = typed[newPath[rp]] || i < len(base.Packages)
				}
			}
		}
		// Only the analyzers a candidate needs answered: the base of a
		// lost cancel needs lostcancel, not a hundred staticcheck checks.
		var needed []*analysis.Analyzer
		for _, cd := range cands {
			if cd.checkBase && !slices.Contains(needed, cd.Analyzer) {
				needed = append(needed, cd.Analyzer)
			}
		}
		if bds, err = base.Analyze(ctx, needed, nil); err != nil {
			return nil, fmt.Errorf("analyse the base: %w", err)
		}
	}
	cands = slices.DeleteFunc(cands, func(cd candidate) bool {
		return cd.checkBase && (cd.cause != "" && !comparable[cd.Path] || cd.needTyped && !typed[cd.Path])
	})
	atBase := map[string]int{}
	for _, d := range bds {
		np, ok := newPath[d.Path]
		if !ok {
			continue
		}
		atBase[diagnosticKey(d, np, base.funcName(d.Path, d.Line), base.lineText(d.Path, d.Line))]++
	}
	// The head's own diagnostics that are no candidate (unchanged code)
	// answer for their base twins first: identical lines elsewhere must
	// not make a new problem look old.
	id := func(d Diagnostic) string {
		return fmt.Sprintf("%p\x00%s:%d-%d\x00%s\x00%s", d.Analyzer, d.Path, d.Line, d.EndLine, d.Category, d.Message)
	}
	isCand := map[string]bool{}
	for _, cd := range cands {
		isCand[id(cd.Diagnostic)] = true
	}
	key := func(d Diagnostic) string {
		return diagnosticKey(d, d.Path, p.funcName(d.Path, d.Line), p.lineText(d.Path, d.Line))
	}
	for _, d := range all {
		if !isCand[id(d)] && atBase[key(d)] > 0 {
			atBase[key(d)]--
		}
	}
	out := cands[:0]
	for _, cd := range cands {
		k := key(cd.Diagnostic)
		if cd.checkBase && atBase[k] > 0 {
			atBase[k]--
			continue
		}
		out = append(out, cd)
	}
	return out, nil
}

// digits are replaced in messages, which name line numbers and counts.
var digits = regexp.MustCompile(`[0-9]+`)

// diagnosticKey identifies a diagnostic by its content, the same at base
// and head when the code it flags did not change.
func diagnosticKey(d Diagnostic, path, fn, line string) string {
	name := ""
	if d.Analyzer != nil {
		name = d.Analyzer.Name
	}
	return strings.Join([]string{name, d.Category, path, fn, digits.ReplaceAllString(d.Message, "#"), strings.Join(strings.Fields(line), " ")}, "\x00")
}

// funcLines returns the lines of a Go file as "function\x00text" (the
// function declaration holding the line, named as funcName names it, or
// "" outside any; the text with its spaces normalised); nil for a file
// that does not parse.
func funcLines(src []byte) map[string]bool {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	text := strings.Split(string(src), "\n")
	names := make([]string, len(text)+1)
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name := declName(fd)
		for l := fset.PositionFor(fd.Pos(), false).Line; l <= fset.PositionFor(fd.End(), false).Line && l <= len(text); l++ {
			names[l] = name
		}
	}
	out := map[string]bool{}
	for i, t := range text {
		out[names[i+1]+"\x00"+strings.Join(strings.Fields(t), " ")] = true
	}
	return out
}

// declName names a function declaration: "(*Engine).Run", "New".
func declName(fd *ast.FuncDecl) string {
	if fd.Recv != nil && len(fd.Recv.List) == 1 {
		return "(" + types.ExprString(fd.Recv.List[0].Type) + ")." + fd.Name.Name
	}
	return fd.Name.Name
}

// funcName names the function declaration holding line of the file at
// path ("(*Engine).Run", "New"), or "" outside any.
func (p *Program) funcName(path string, line int) string {
	fset, file := p.syntaxOf(path)
	if file == nil {
		return ""
	}
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || line < fset.PositionFor(fd.Pos(), false).Line || line > fset.PositionFor(fd.End(), false).Line {
			continue
		}
		return declName(fd)
	}
	return ""
}

// changedRange reports whether a line of [line, end] was added by the
// change.
func changedRange(f *change.File, line, end int) bool {
	for l := line; l <= max(line, end); l++ {
		if f.Changed(l) {
			return true
		}
	}
	return false
}

// causeIn describes what the change did within head lines [start, end] of
// f, the function named fn in the text: the lines it deleted there, or the
// lines it added. Empty when it did nothing there.
func causeIn(f *change.File, start, end int, fn string) string {
	var deleted []change.Line
	var added []int
	for _, h := range f.Hunks {
		next := h.NewStart // the head line a deleted line stood before
		for i, l := range h.Lines {
			switch l.Kind {
			case change.KindDeleted:
				at := next
				for _, m := range h.Lines[i+1:] {
					if m.Kind != change.KindDeleted {
						at = m.NewNumber
						break
					}
				}
				if at > start && at <= end+1 && strings.TrimSpace(l.Text) != "" {
					deleted = append(deleted, l)
				}
			case change.KindAdded:
				if l.NewNumber >= start && l.NewNumber <= end {
					added = append(added, l.NewNumber)
				}
				next = l.NewNumber + 1
			default:
				next = l.NewNumber + 1
			}
		}
	}
	switch {
	case len(deleted) > 0:
		var parts []string
		for _, l := range deleted[:min(3, len(deleted))] {
			parts = append(parts, fmt.Sprintf("line %d `%s`", l.OldNumber, strings.TrimSpace(l.Text)))
		}
		more := ""
		if len(deleted) > 3 {
			more = fmt.Sprintf(" and %d more", len(deleted)-3)
		}
		return "the change deleted " + strings.Join(parts, ", ") + more + " of the base in " + fn
	case len(added) > 0:
		return fmt.Sprintf("the change to %s at line %d", fn, added[0])
	}
	return ""
}

// causeAt describes what the change did in the innermost function holding
// head line of f, named fn in the text, or "" when it did nothing there.
func (p *Program) causeAt(f *change.File, line int, fn string) string {
	start, end, ok := p.enclosingFunc(f.NewPath, line)
	if !ok {
		return ""
	}
	return causeIn(f, start, end, fn)
}

// enclosingFunc returns the head lines of the innermost function (a
// declaration or a literal) that holds line of the file at path: a
// closure the change did not touch is not changed because the function
// around it was.
func (p *Program) enclosingFunc(path string, line int) (start, end int, ok bool) {
	fset, file := p.syntaxOf(path)
	if file == nil {
		return 0, 0, false
	}
	ast.Inspect(file, func(n ast.Node) bool {
		if n == nil {
			return false
		}
		s, e := fset.PositionFor(n.Pos(), false).Line, fset.PositionFor(n.End(), false).Line
		if line < s || line > e {
			return false
		}
		switch fn := n.(type) {
		case *ast.FuncDecl:
			if fn.Body != nil {
				start, end, ok = s, e, true
			}
		case *ast.FuncLit:
			start, end, ok = s, e, true
		}
		return true
	})
	return start, end, ok
}

// syntaxOf returns the parsed file at a repository path, from the
// type-checked packages or the syntax-only files.
func (p *Program) syntaxOf(rp string) (*token.FileSet, *ast.File) {
	full := p.Root + "/" + rp
	for _, pkg := range slices.Concat(p.Packages, p.unrepaired, p.Repaired) {
		for i, f := range pkg.CompiledGoFiles {
			if f == full && i < len(pkg.Syntax) {
				return pkg.Fset, pkg.Syntax[i]
			}
		}
	}
	for _, f := range p.Files {
		if p.Fset.PositionFor(f.Pos(), false).Filename == full {
			return p.Fset, f
		}
	}
	return nil, nil
}

// lineText returns a line of a copied file, or "".
func (p *Program) lineText(rp string, line int) string {
	b, ok := p.head[rp]
	if !ok || line < 1 {
		return ""
	}
	lines := strings.Split(string(b), "\n")
	if line > len(lines) {
		return ""
	}
	return lines[line-1]
}

// loadBase loads, once per change, the changed packages at base that hold
// the files at the given base paths. A nil program means the base holds
// none of them.
func (l *Loader) loadBase(ctx context.Context, c *change.Change, paths map[string]bool) (*Program, error) {
	// dirs holds the directories of the candidates, true where one is in
	// a test file: only there are the tests loaded (a test variant is a
	// second package to type-check).
	dirs := map[string]bool{}
	for p := range paths {
		dirs[path.Dir(p)] = dirs[path.Dir(p)] || strings.HasSuffix(p, "_test.go")
	}
	s := side{rev: c.BaseSHA, onDemand: true}
	for _, f := range c.Files {
		tests, ok := dirs[path.Dir(f.OldPath)]
		if f.OldPath != "" && f.Status != change.StatusAdded && strings.HasSuffix(f.OldPath, ".go") && ok &&
			(tests || !strings.HasSuffix(f.OldPath, "_test.go")) {
			s.files = append(s.files, f.OldPath)
		}
	}
	if len(s.files) == 0 {
		return nil, nil
	}
	slices.Sort(s.files)
	key := "base\x00" + c.BaseSHA + "\x00" + strings.Join(s.files, "\x00")
	return l.cached(ctx, key, func() (*Program, error) { return l.loadSide(ctx, c, s) })
}
