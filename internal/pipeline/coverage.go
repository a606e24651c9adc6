package pipeline

import (
	"fmt"
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

// unanalysed returns the changed source files (present at head) that no
// engine of a specialist that succeeded said it analysed, each with the
// reasons the engines gave, or that no engine covers its language.
func unanalysed(c *change.Change, outcomes []Outcome) []gap {
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
		l := lang.Of(f.NewPath)
		if l == "" || analysed[f.NewPath] {
			continue
		}
		why := strings.Join(reasons[f.NewPath], "; ")
		if why == "" {
			why = fmt.Sprintf("no engine reviews %s", l)
		}
		gaps = append(gaps, gap{path: f.NewPath, reason: why})
	}
	return gaps
}

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
			if strings.ContainsFunc(p, unicode.IsControl) {
				shown[i] = strconv.Quote(p)
			}
		}
		more := ""
		if len(paths) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(paths)-len(shown))
		}
		fmt.Fprintf(&b, "- %s%s: %s\n", strings.Join(shown, ", "), more, r)
	}
	return b.String()
}
