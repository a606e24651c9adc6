package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/lang"
)

// gap is a changed source file that no engine analysed, and why.
type gap struct {
	path, reason string
}

// sourceLanguages returns the language of each changed file present at
// head that is source code: by its name, or, for a name without an
// extension, by the interpreter its first line names (lang.Detect).
func sourceLanguages(ctx context.Context, c *change.Change) map[string]string {
	out := map[string]string{}
	files := slices.Clone(c.Files)
	for _, sk := range c.Skipped {
		files = append(files, sk.File)
	}
	for _, f := range files {
		if f.Status == change.StatusDeleted || f.NewPath == "" {
			continue
		}
		l := lang.Detect(f.NewPath, func() []byte {
			b, _ := c.ReadFile(ctx, f.NewPath)
			return b
		})
		if l != "" {
			out[f.NewPath] = l
		}
	}
	return out
}

// unanalysed returns the changed source files (present at head, langs
// says of which language) that no engine of a specialist that succeeded
// said it analysed, each with the reasons the engines gave, or that no
// engine covers its language; and those skipped for their shape (binary,
// generated, vendored, minified, a link), with why.
func unanalysed(ctx context.Context, c *change.Change, langs map[string]string, outcomes []Outcome) []gap {
	analysed := map[string]bool{}
	reasons := map[string][]string{}
	for _, o := range outcomes {
		if o.Err != nil {
			continue
		}
		for _, cv := range o.Coverage {
			if cv.Analysed {
				analysed[cv.Path] = true
			} else if cv.Reason != "" && !slices.Contains(reasons[cv.Path], cv.Reason) {
				reasons[cv.Path] = append(reasons[cv.Path], cv.Reason)
			}
		}
	}
	var gaps []gap
	for _, f := range c.Files {
		if f.Status == change.StatusDeleted || f.NewPath == "" {
			continue
		}
		l := langs[f.NewPath]
		if l == "" || analysed[f.NewPath] {
			continue
		}
		why := strings.Join(reasons[f.NewPath], "; ")
		if why == "" {
			why = fmt.Sprintf("no engine reviews %s", l)
		}
		gaps = append(gaps, gap{path: f.NewPath, reason: why})
	}
	for _, sk := range c.Skipped {
		f := sk.File
		if f.Status == change.StatusDeleted || f.NewPath == "" || langs[f.NewPath] == "" {
			continue
		}
		var link string // a symbolic link's target, as written
		if sk.Reason == change.ReasonSymlink {
			if b, err := c.ReadFile(ctx, f.NewPath); err == nil {
				link = string(b)
			}
			// A link to a file of the change that was analysed as the
			// same language hides nothing.
			if to := linkTarget(f.NewPath, link); to != "" && analysed[to] && langs[to] == langs[f.NewPath] {
				continue
			}
		}
		gaps = append(gaps, gap{path: f.NewPath, reason: skippedWhy(sk, link)})
	}
	return gaps
}

// linkTarget returns the repository path a symbolic link at p whose
// target is to points to, or "" when it points outside the repository.
func linkTarget(p, to string) string {
	if to == "" || path.IsAbs(to) {
		return ""
	}
	t := path.Join(path.Dir(p), to)
	if t == ".." || strings.HasPrefix(t, "../") {
		return ""
	}
	return t
}

// skippedWhy says why a skipped source file was not analysed (link is a
// symbolic link's target). A marker of generated or vendored code on a new
// file is only the change's word: the reason says so.
func skippedWhy(sk change.Skipped, link string) string {
	f := sk.File
	switch sk.Reason {
	case change.ReasonSymlink:
		if link != "" && len(link) <= 200 && !strings.ContainsFunc(link, unicode.IsControl) {
			return fmt.Sprintf("skipped: a symbolic link (to %s), not followed", link)
		}
		return "skipped: a symbolic link, not followed"
	case change.ReasonSubmodule:
		return "skipped: a submodule"
	case change.ReasonBinary:
		return "skipped as binary (git found a NUL byte in it)"
	case change.ReasonGenerated:
		if f.Status == change.StatusAdded {
			return "skipped as generated, which only this change says (a new file)"
		}
	case change.ReasonVendored:
		if f.Status == change.StatusAdded {
			return "skipped as vendored (a new file in a vendored directory)"
		}
	}
	return "skipped as " + strings.ReplaceAll(string(sk.Reason), "_", " ")
}

// maxShownPath is the longest path the summary shows whole.
const maxShownPath = 200

// gapText says what was not analysed, in a few lines: files grouped by
// reason, at most a handful named per reason.
func gapText(gaps []gap) string {
	var order []string
	byReason := map[string][]string{}
	for _, g := range gaps {
		if _, ok := byReason[g.reason]; !ok {
			order = append(order, g.reason)
		}
		byReason[g.reason] = append(byReason[g.reason], g.path)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Not analysed: %s of changed source, so this review cannot approve it.\n", plural(len(gaps), "file"))
	for _, r := range order {
		paths := byReason[r]
		shown := slices.Clone(paths[:min(5, len(paths))])
		for i, p := range shown {
			if len(p) > maxShownPath {
				// A name of thousands of characters would be the summary.
				p = p[:maxShownPath/2] + "…" + p[len(p)-maxShownPath/4:]
				p = strings.ToValidUTF8(p, "")
			}
			if strings.ContainsFunc(p, unicode.IsControl) {
				p = strconv.Quote(p)
			}
			shown[i] = p
		}
		more := ""
		if len(paths) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(paths)-len(shown))
		}
		fmt.Fprintf(&b, "- %s%s: %s\n", strings.Join(shown, ", "), more, r)
	}
	return b.String()
}

// engineNames are how the summary names the engines coverage reports.
var engineNames = map[string]string{"go": "Go analyzers", "llm": "LLM"}

// languagesText says, in one line, the languages of the change's source
// files (langs) and which engines reviewed each: "Languages: Go (Go
// analyzers), Python (ruff), shell (not analysed)." Empty when the change
// has no source.
func languagesText(c *change.Change, langs map[string]string, outcomes []Outcome) string {
	engines := map[string][]string{}
	for _, o := range outcomes {
		if o.Err != nil {
			continue
		}
		for _, cv := range o.Coverage {
			if cv.Analysed && !slices.Contains(engines[cv.Path], cv.Engine) {
				engines[cv.Path] = append(engines[cv.Path], cv.Engine)
			}
		}
	}
	var order []string
	byLang := map[string][]string{}
	for _, f := range c.Files {
		if f.Status == change.StatusDeleted || f.NewPath == "" {
			continue
		}
		l := langs[f.NewPath]
		if l == "" {
			continue
		}
		if _, ok := byLang[l]; !ok {
			order = append(order, l)
			byLang[l] = []string{}
		}
		for _, e := range engines[f.NewPath] {
			if !slices.Contains(byLang[l], e) {
				byLang[l] = append(byLang[l], e)
			}
		}
	}
	if len(order) == 0 {
		return ""
	}
	parts := make([]string, 0, len(order))
	for _, l := range order {
		es := byLang[l]
		if len(es) == 0 {
			parts = append(parts, l+" (not analysed)")
			continue
		}
		slices.Sort(es)
		names := make([]string, len(es))
		for i, e := range es {
			names[i] = cmp.Or(engineNames[e], e)
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", l, strings.Join(names, ", ")))
	}
	return "Languages: " + strings.Join(parts, ", ") + "."
}
