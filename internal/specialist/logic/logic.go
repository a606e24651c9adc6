// Package logic is the built-in logic specialist: for Go, the go vet
// passes of golang.org/x/tools and staticcheck's SA checks, run on the
// packages a change touches and reported on the lines it changed.
package logic

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/appends"
	"golang.org/x/tools/go/analysis/passes/assign"
	"golang.org/x/tools/go/analysis/passes/atomic"
	"golang.org/x/tools/go/analysis/passes/bools"
	"golang.org/x/tools/go/analysis/passes/copylock"
	"golang.org/x/tools/go/analysis/passes/deepequalerrors"
	"golang.org/x/tools/go/analysis/passes/defers"
	"golang.org/x/tools/go/analysis/passes/errorsas"
	"golang.org/x/tools/go/analysis/passes/httpresponse"
	"golang.org/x/tools/go/analysis/passes/ifaceassert"
	"golang.org/x/tools/go/analysis/passes/loopclosure"
	"golang.org/x/tools/go/analysis/passes/lostcancel"
	"golang.org/x/tools/go/analysis/passes/nilfunc"
	"golang.org/x/tools/go/analysis/passes/nilness"
	"golang.org/x/tools/go/analysis/passes/printf"
	"golang.org/x/tools/go/analysis/passes/reflectvaluecompare"
	"golang.org/x/tools/go/analysis/passes/shift"
	"golang.org/x/tools/go/analysis/passes/sigchanyzer"
	"golang.org/x/tools/go/analysis/passes/slog"
	"golang.org/x/tools/go/analysis/passes/sortslice"
	"golang.org/x/tools/go/analysis/passes/stdmethods"
	"golang.org/x/tools/go/analysis/passes/stringintconv"
	"golang.org/x/tools/go/analysis/passes/structtag"
	"golang.org/x/tools/go/analysis/passes/testinggoroutine"
	"golang.org/x/tools/go/analysis/passes/timeformat"
	"golang.org/x/tools/go/analysis/passes/unmarshal"
	"golang.org/x/tools/go/analysis/passes/unreachable"
	"golang.org/x/tools/go/analysis/passes/unsafeptr"
	"golang.org/x/tools/go/analysis/passes/unusedresult"
	"golang.org/x/tools/go/analysis/passes/waitgroup"
	"honnef.co/go/tools/analysis/lint"
	"honnef.co/go/tools/staticcheck"

	"github.com/quorum-review/quorum/internal/analyzer/droppederror"
	"github.com/quorum-review/quorum/internal/analyzer/lenguard"
	"github.com/quorum-review/quorum/internal/analyzer/netcontext"
	"github.com/quorum-review/quorum/internal/analyzer/printnewline"
	"github.com/quorum-review/quorum/internal/analyzer/release"
	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis"
	"github.com/quorum-review/quorum/internal/specialist"
)

// vetSeverity is each go vet pass the specialist runs, with the severity
// of what it finds: a bug that leaks, panics or corrupts is high; code
// that misbehaves in a visible but bounded way is medium; dead or
// suspicious code is low. composite (unkeyed fields) and shadow are left
// out: they flag style far more often than bugs.
var vetSeverity = map[*analysis.Analyzer]string{
	lostcancel.Analyzer:          specialist.SeverityHigh, // a context leak
	nilness.Analyzer:             specialist.SeverityHigh, // a nil dereference
	copylock.Analyzer:            specialist.SeverityHigh, // a copied mutex does not lock
	atomic.Analyzer:              specialist.SeverityHigh, // x = atomic.AddInt64(&x, 1) races
	errorsas.Analyzer:            specialist.SeverityHigh, // errors.As panics
	httpresponse.Analyzer:        specialist.SeverityHigh, // resp used before err is checked
	loopclosure.Analyzer:         specialist.SeverityHigh, // only before Go 1.22 semantics
	unmarshal.Analyzer:           specialist.SeverityHigh, // decoding into a non-pointer
	waitgroup.Analyzer:           specialist.SeverityHigh, // wg.Add inside the goroutine
	unsafeptr.Analyzer:           specialist.SeverityHigh,
	printf.Analyzer:              specialist.SeverityMedium,
	unusedresult.Analyzer:        specialist.SeverityMedium,
	bools.Analyzer:               specialist.SeverityMedium,
	shift.Analyzer:               specialist.SeverityMedium,
	stdmethods.Analyzer:          specialist.SeverityMedium,
	stringintconv.Analyzer:       specialist.SeverityMedium,
	structtag.Analyzer:           specialist.SeverityMedium,
	defers.Analyzer:              specialist.SeverityMedium,
	sigchanyzer.Analyzer:         specialist.SeverityMedium,
	testinggoroutine.Analyzer:    specialist.SeverityMedium,
	timeformat.Analyzer:          specialist.SeverityMedium,
	nilfunc.Analyzer:             specialist.SeverityMedium,
	ifaceassert.Analyzer:         specialist.SeverityMedium,
	deepequalerrors.Analyzer:     specialist.SeverityMedium,
	reflectvaluecompare.Analyzer: specialist.SeverityMedium,
	sortslice.Analyzer:           specialist.SeverityMedium,
	slog.Analyzer:                specialist.SeverityMedium,
	assign.Analyzer:              specialist.SeverityLow,
	appends.Analyzer:             specialist.SeverityLow,
	unreachable.Analyzer:         specialist.SeverityLow,
}

// staticcheckSeverity overrides the severity of single SA checks; the rest
// follow their group (see saSeverity).
var staticcheckSeverity = map[string]string{
	"SA1019": specialist.SeverityLow,    // a deprecated identifier
	"SA4006": specialist.SeverityMedium, // a value assigned and never read
	"SA5011": specialist.SeverityHigh,   // a nil pointer dereference
	"SA5000": specialist.SeverityHigh,   // assignment to a nil map
	"SA5007": specialist.SeverityHigh,   // infinite recursion
	"SA2000": specialist.SeverityHigh,   // wg.Add inside the goroutine
	"SA2002": specialist.SeverityHigh,   // t.FailNow from a goroutine
	"SA1015": specialist.SeverityMedium, // time.Tick leaks
	"SA4017": specialist.SeverityMedium, // a pure function's result discarded
}

// staticcheckSkipped are SA checks the specialist does not run: SA5009
// repeats vet's printf check, SA6xxx belong to the performance
// specialist, and SA9xxx flag dubious rather than wrong code, except
// SA9001 (defer in a range over a channel) and SA9008 (else branch of a
// type switch cannot see the variable's type).
func staticcheckSkipped(name string) bool {
	return name == "SA5009" || strings.HasPrefix(name, "SA6") ||
		(strings.HasPrefix(name, "SA9") && name != "SA9001" && name != "SA9008")
}

// saSeverity is the severity of an SA check by its group: SA2 (concurrency)
// and SA5 (correctness) are high; SA1 (misuse of the standard library),
// SA3 (testing) and SA4 (code that does nothing) medium; SA9 low.
func saSeverity(name string) string {
	if s, ok := staticcheckSeverity[name]; ok {
		return s
	}
	switch {
	case strings.HasPrefix(name, "SA2"), strings.HasPrefix(name, "SA5"):
		return specialist.SeverityHigh
	case strings.HasPrefix(name, "SA9"):
		return specialist.SeverityLow
	}
	return specialist.SeverityMedium
}

// Logic is the logic specialist. It is safe for concurrent use.
type Logic struct {
	loader    *goanalysis.Loader
	analyzers []*analysis.Analyzer
	rules     map[*analysis.Analyzer]classified
}

type classified struct{ rule, severity string }

var _ specialist.Specialist = (*Logic)(nil)

// New returns the logic specialist loading packages with loader, which
// specialists should share (one load per change for all of them); nil is
// a loader of its own with the default, offline configuration.
func New(loader *goanalysis.Loader) *Logic {
	if loader == nil {
		loader = goanalysis.NewLoader(goanalysis.Config{})
	}
	l := &Logic{loader: loader, rules: map[*analysis.Analyzer]classified{}}
	for a, sev := range vetSeverity {
		l.analyzers = append(l.analyzers, a)
		l.rules[a] = classified{"go-vet:" + a.Name, sev}
	}
	for _, a := range staticcheck.Analyzers {
		name := a.Analyzer.Name
		if staticcheckSkipped(name) || a.Doc.NonDefault || a.Doc.Severity == lint.SeverityHint {
			continue
		}
		l.analyzers = append(l.analyzers, a.Analyzer)
		l.rules[a.Analyzer] = classified{"staticcheck:" + name, saSeverity(name)}
	}
	slices.SortFunc(l.analyzers, func(a, b *analysis.Analyzer) int { return strings.Compare(a.Name, b.Name) })
	loader.Register(l.analyzers...)
	// Our own, for what no vet or staticcheck check reports (see
	// docs/analyzers.md):
	for _, own := range []struct {
		a *analysis.Analyzer
		classified
	}{
		// a lock never released, a resource never closed, a lock left
		// held or a cleanup skipped on one error path;
		{release.Analyzer, classified{"quorum:release", specialist.SeverityHigh}},
		// a call of the repository's own function whose error is
		// dropped (a deleted error check);
		{droppederror.Analyzer, classified{"quorum:dropped-error", specialist.SeverityMedium}},
		// the redundant newline of a Println-style call, which vet's
		// printf pass of the x/tools we pin no longer reports;
		{printnewline.Analyzer, classified{"quorum:print-newline", specialist.SeverityLow}},
		// a cancel function of golang.org/x/net/context discarded
		// (vet's lostcancel knows only the standard library's);
		{netcontext.Analyzer, classified{"quorum:lostcancel", specialist.SeverityHigh}},
		// an index one past what the length check before it ensures.
		{lenguard.Analyzer, classified{"quorum:len-guard", specialist.SeverityHigh}},
	} {
		l.analyzers = append(l.analyzers, own.a)
		l.rules[own.a] = own.classified
		loader.Register(own.a)
	}
	// A change that does not compile is told so, where it does not.
	l.analyzers = append(l.analyzers, goanalysis.TypeCheck)
	l.rules[goanalysis.TypeCheck] = classified{"go:typecheck", specialist.SeverityHigh}
	return l
}

// Name is "logic".
func (l *Logic) Name() string { return specialist.Logic }

// Review runs the vet passes and staticcheck over the changed Go packages.
// There are no syntax-only logic checks: when the packages cannot be
// type-checked the specialist finds nothing rather than guess.
func (l *Logic) Review(ctx context.Context, c *change.Change) ([]specialist.Finding, error) {
	files := map[string]*change.File{}
	for _, f := range c.Files {
		files[f.Path()] = f
	}
	fs, err := l.loader.Findings(ctx, c, specialist.CategoryLogic, l.analyzers, nil, func(d goanalysis.Diagnostic) (string, string, bool) {
		r, ok := l.rules[d.Analyzer]
		if ok && d.Analyzer == droppederror.Analyzer {
			// Decided here, before the differential step, so that
			// no base is loaded for a finding that cannot stand.
			m := droppedBy.FindStringSubmatch(d.Message)
			ok = m != nil && deletedNear(files[d.Path], d.Line, func(text string) bool {
				return strings.Contains(text, m[1]+"(") && strings.Contains(text, "err")
			})
		}
		if ok && d.Analyzer == release.Analyzer && d.Category == release.CategoryCleanup {
			// Which returns need the cleanup only the change tells:
			// the one it took away.
			m := skipsCleanup.FindStringSubmatch(d.Message)
			ok = m != nil && deletedNear(files[d.Path], d.Line, func(text string) bool {
				return strings.Contains(text, m[1]+"(")
			})
		}
		return r.rule, r.severity, ok
	})
	if err != nil {
		return nil, err
	}
	fs, err = deprecatedBefore(ctx, c, fs)
	if err != nil {
		return nil, err
	}
	return oneTypeErrorShape(oneLostCancel(fs)), nil
}

// deprecatedName is the deprecated identifier SA1019's message names
// ("net/http.CloseNotifier has been deprecated since …").
var deprecatedName = regexp.MustCompile(`^(?:[\w./*()]+\.)?(\w+) has been deprecated`)

// deprecatedBefore drops SA1019 where the file already used the
// deprecated identifier at base: the change rewrote a line that used it
// (gin d75fcd4 restructured its CloseNotify method, which implements the
// deprecated http.CloseNotifier by design); a new use of it is still
// reported.
func deprecatedBefore(ctx context.Context, c *change.Change, fs []specialist.Finding) ([]specialist.Finding, error) {
	files := map[string]*change.File{}
	for _, f := range c.Files {
		files[f.Path()] = f
	}
	base := map[string]string{}
	var err error
	out := slices.DeleteFunc(fs, func(f specialist.Finding) bool {
		m := deprecatedName.FindStringSubmatch(f.Headline)
		cf := files[f.Path]
		if f.Rule != "staticcheck:SA1019" || m == nil || cf == nil || cf.OldPath == "" || cf.Status == change.StatusAdded || err != nil {
			return false
		}
		src, ok := base[cf.OldPath]
		if !ok {
			var b []byte
			if b, err = c.ReadFileAt(ctx, c.BaseSHA, cf.OldPath); err != nil {
				err = fmt.Errorf("read %s at base: %w", cf.OldPath, err)
				return false
			}
			src = string(b)
			base[cf.OldPath] = src
		}
		return regexp.MustCompile(`\b` + regexp.QuoteMeta(m[1]) + `\b`).MatchString(src)
	})
	return out, err
}

// droppedBy is the dropped-error headline, naming the function.
var droppedBy = regexp.MustCompile(`^the error returned by (\w+) is dropped`)

// skipsCleanup is the skipped-cleanup headline, naming the call.
var skipsCleanup = regexp.MustCompile(`^this error return skips (\w+\.\w+)\(\)`)

// deletedNear reports whether the change deleted, within three lines of
// line, a line that is (per is) what a finding there is about. A
// dropped-error finding is kept only where a deleted line called the
// function and named err: some repositories drop their own errors on
// purpose by the hundred (nats-server: 375 such calls), and new code there
// is written the same way; a check taken away is the bug. A skipped
// cleanup likewise stands only where the cleanup was taken away.
func deletedNear(file *change.File, line int, is func(text string) bool) bool {
	if file == nil {
		return false
	}
	for _, h := range file.Hunks {
		next := h.NewStart
		for i, l := range h.Lines {
			if l.Kind != change.KindDeleted {
				if l.NewNumber > 0 {
					next = l.NewNumber + 1
				}
				continue
			}
			at := next
			for _, n := range h.Lines[i+1:] {
				if n.Kind != change.KindDeleted {
					at = n.NewNumber
					break
				}
			}
			if at >= line-3 && at <= line+3 && is(l.Text) {
				return true
			}
		}
	}
	return false
}

// returnWithoutCancel is lostcancel's second report of one leak, on each
// return that may skip the cancel defined on the line it names.
var returnWithoutCancel = regexp.MustCompile(`^this return statement may be reached without using the cancel var defined on line (\d+)$`)

// oneLostCancel keeps one finding per leaked cancel (and the netcontext
// analyzer's only where vet's lostcancel is silent): lostcancel reports
// the leak where the cancel is defined and again at each return that
// skips it; the reader needs the first (on real code the others were
// judged noise).
func oneLostCancel(fs []specialist.Finding) []specialist.Finding {
	defined := map[string]bool{}
	for _, f := range fs {
		if f.Rule == "go-vet:lostcancel" && !returnWithoutCancel.MatchString(f.Headline) {
			defined[fmt.Sprintf("%s:%d", f.Path, f.Line)] = true
		}
	}
	return slices.DeleteFunc(fs, func(f specialist.Finding) bool {
		if f.Rule == "quorum:lostcancel" {
			// vet's lostcancel said it already (x/net/context not
			// loaded, it goes by the package's name).
			return defined[fmt.Sprintf("%s:%d", f.Path, f.Line)]
		}
		m := returnWithoutCancel.FindStringSubmatch(f.Headline)
		return f.Rule == "go-vet:lostcancel" && m != nil && defined[f.Path+":"+m[1]]
	})
}

// typeErrorShape reduces a type error to what its repeats share: the
// expression and the constants blanked out, so "cannot use Message("a")
// (constant "a" of string type Message) as string value" and "cannot use
// info.Message (variable of string type Message) as string value" are one
// shape.
func typeErrorShape(msg string) string {
	if rest, ok := strings.CutPrefix(msg, "cannot use "); ok {
		if i := strings.Index(rest, " ("); i >= 0 {
			msg = "cannot use" + rest[i:]
		}
	}
	msg = quoted.ReplaceAllString(msg, "")
	return valueKind.ReplaceAllString(msg, "(")
}

var (
	quoted    = regexp.MustCompile(`"(\\.|[^"\\])*"`)
	valueKind = regexp.MustCompile(`\((constant|variable|value)\b[^)]*? of `)
)

// oneTypeErrorShape keeps one type-check finding per shape of error (see
// typeErrorShape), preferring one outside test files, and names the
// others in its body: one change of a type breaks every use alike, and
// the reader needs the first to see them all (on go-mssqldb 7bb1ded9 one
// field's new type gave three findings, two of them in tests).
func oneTypeErrorShape(fs []specialist.Finding) []specialist.Finding {
	first := map[string]int{}
	for i, f := range fs {
		if f.Rule != "go:typecheck" {
			continue
		}
		k := typeErrorShape(f.Headline)
		if j, ok := first[k]; !ok || strings.HasSuffix(fs[j].Path, "_test.go") && !strings.HasSuffix(f.Path, "_test.go") {
			first[k] = i
		}
	}
	also := map[int][]string{}
	keep := map[int]bool{}
	for _, i := range first {
		keep[i] = true
	}
	for i, f := range fs {
		if f.Rule == "go:typecheck" && !keep[i] {
			k := first[typeErrorShape(f.Headline)]
			also[k] = append(also[k], fmt.Sprintf("%s:%d", f.Path, f.Line))
		}
	}
	var out []specialist.Finding
	for i, f := range fs {
		if f.Rule == "go:typecheck" && !keep[i] {
			continue
		}
		if len(also[i]) > 0 {
			f.Body = strings.TrimSpace(f.Body + "\n\nThe same error at " + strings.Join(also[i], ", ") + ".")
		}
		out = append(out, f)
	}
	return out
}
