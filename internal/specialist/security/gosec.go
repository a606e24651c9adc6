package security

import (
	"fmt"
	"go/token"
	"io"
	"log"
	"slices"
	"strconv"
	"strings"

	"github.com/securego/gosec/v2"
	"github.com/securego/gosec/v2/analyzers"
	"github.com/securego/gosec/v2/issue"
	"github.com/securego/gosec/v2/rules"
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/packages"

	"github.com/quorum-review/quorum/internal/specialist"
)

// gosecSeverity is each gosec rule the specialist runs, with the severity
// of its findings: injection, disabled verification and path traversal
// with a tainted source are high; weak cryptography and randomness,
// SSRF-like and resource-exhaustion risks medium; hardening advice low.
//
// Left out: G101 (hard-coded credentials: the secrets scanner does this
// with gitleaks' far more precise rules), G104 (unchecked errors: not a
// security finding), G103 (every use of unsafe), G115 and G602 (integer
// conversions and slice bounds: mostly false alarms), G117 (struct fields
// named like secrets), G301/G302/G306/G307 (file permissions, flagged on
// almost any os.WriteFile), G601 (loop variables are per iteration since
// Go 1.22), G705 (XSS: flags every write of bytes to a ResponseWriter,
// JSON APIs included), G706 (log injection) and G118. G107 (a URL from a
// variable) and G304 (a file path from a variable) flag nearly every
// http.Get and os.Open: their taint twins G704 and G703, which follow the
// data from a real source, stand for them. G204 is kept only where gosec
// calls its argument tainted, not for any command built from a variable,
// and at medium: only the taint analysis (G702) knows the input comes from
// a user. The weak hashes (G401 and G406 on a call, G501 and G505–G507 on
// an import) flag every checksum, ETag and cache key: quorum's weakhash
// analyzer reports them instead where a password or a secret flows in
// (quorum:weak-hash, internal/analyzer/weakhash).
var gosecSeverity = map[string]string{
	"G201": specialist.SeverityHigh, "G202": specialist.SeverityHigh,
	"G204": specialist.SeverityMedium, "G402": specialist.SeverityHigh,
	"G106": specialist.SeverityHigh, "G305": specialist.SeverityHigh,
	"G116": specialist.SeverityHigh, "G407": specialist.SeverityHigh,
	"G408": specialist.SeverityHigh,
	"G701": specialist.SeverityHigh, "G702": specialist.SeverityHigh,
	"G703": specialist.SeverityHigh, "G707": specialist.SeverityHigh,
	"G708": specialist.SeverityHigh, "G709": specialist.SeverityHigh,

	"G108": specialist.SeverityMedium,
	"G110": specialist.SeverityMedium, "G111": specialist.SeverityMedium,
	"G113": specialist.SeverityMedium, "G119": specialist.SeverityMedium,
	"G120": specialist.SeverityMedium, "G121": specialist.SeverityMedium,
	"G122": specialist.SeverityMedium, "G123": specialist.SeverityMedium,
	"G124": specialist.SeverityMedium, "G203": specialist.SeverityMedium,
	"G303": specialist.SeverityMedium,
	"G403": specialist.SeverityMedium,
	"G404": specialist.SeverityMedium, "G405": specialist.SeverityMedium,
	"G502": specialist.SeverityMedium, "G503": specialist.SeverityMedium,
	"G112": specialist.SeverityMedium, "G114": specialist.SeverityMedium,
	"G504": specialist.SeverityMedium,
	"G704": specialist.SeverityMedium, "G710": specialist.SeverityMedium,

	"G102": specialist.SeverityLow, "G109": specialist.SeverityLow,
	"G125": specialist.SeverityLow,
}

// lowConfidenceKept are rules kept although gosec gives their findings
// low confidence: G112 flags an http.Server literal without a read
// (header) timeout that is not set later, which is exactly the
// slowloris exposure; dropping low confidence silenced it entirely.
var lowConfidenceKept = map[string]bool{"G112": true}

// taintTwin maps a classic rule to the taint-analysis rule that flags the
// same call: when both fire on one line, the taint finding is kept, since
// it has followed the data from a real source (a request, os.Args, the
// environment).
var taintTwin = map[string]string{
	"G201": "G701",
	"G202": "G701",
	"G204": "G702",
}

// The rules of quorum's own analyzers.
const (
	sqlInjectionRule  = "quorum:sql-injection"
	pathTraversalRule = "quorum:path-traversal"
	weakHashRule      = "quorum:weak-hash"
)

// onePerLine are the rules that find one problem, by rank: where several
// fire on a line, the highest stands. For SQL injection that is gosec's
// taint rule G701 (it has followed the data from a real source), else the
// sqlinject analyzer, else gosec's G201/G202 (which see only a query
// built into a variable and run in an assignment or a bare call, but
// stand where the analyzer is silent). For path traversal: G703 (taint),
// else the pathtraversal analyzer, else G305.
var onePerLine = []map[string]int{
	{gosecRule("G701"): 3, sqlInjectionRule: 2, gosecRule("G201"): 1, gosecRule("G202"): 1},
	{gosecRule("G703"): 3, pathTraversalRule: 2, gosecRule("G305"): 1},
}

// oncePerLine keeps one finding per line of each group of onePerLine.
func oncePerLine(fs []specialist.Finding) []specialist.Finding {
	for _, rank := range onePerLine {
		best := map[string]int{}
		at := func(f specialist.Finding, l int) string { return f.Path + ":" + strconv.Itoa(l) }
		for _, f := range fs {
			for l := f.Line; l <= max(f.Line, f.EndLine); l++ {
				best[at(f, l)] = max(best[at(f, l)], rank[f.Rule])
			}
		}
		fs = slices.DeleteFunc(fs, func(f specialist.Finding) bool {
			r := rank[f.Rule]
			if r == 0 {
				return false
			}
			for l := f.Line; l <= max(f.Line, f.EndLine); l++ {
				if best[at(f, l)] > r {
					return true
				}
			}
			return false
		})
	}
	return fs
}

// gosecAnalyzer runs gosec's rules (AST) and analyzers (SSA) on one
// package. Each diagnostic's Category is the rule id. Unlike gosec's own
// go/analysis wrapper it has no package-level flags, keeps only rules in
// gosecSeverity and medium or high confidence, and ignores #nosec: a pull
// request cannot silence its own security review.
var gosecAnalyzer = &analysis.Analyzer{
	Name:     "gosec",
	Doc:      "gosec's security rules",
	URL:      "https://securego.io/docs/rules/rule-intro",
	Requires: []*analysis.Analyzer{buildssa.Analyzer},
	Run:      runGosec,
}

// gosecSyntax is gosec's rules without its SSA analyzers, standing in for
// gosecAnalyzer on packages type-checked only in part (where SSA cannot be
// built): G112, G114, G404, G402 and the other rules that read the syntax
// and types still speak there.
var gosecSyntax = &analysis.Analyzer{
	Name: "gosecsyntax",
	Doc:  "gosec's rules that need no SSA",
	URL:  "https://securego.io/docs/rules/rule-intro",
	Run:  runGosec,
}

func runGosec(pass *analysis.Pass) (any, error) {
	conf := gosec.NewConfig()
	conf.SetGlobal(gosec.Nosec, "true")
	g := gosec.NewAnalyzer(conf, true, true, false, 1, log.New(io.Discard, "", 0))
	keep := func(id string) bool { _, ok := gosecSeverity[id]; return !ok } // a filter says what to drop
	ruleDefs, ruleOff := rules.Generate(false, keep).RulesInfo()
	g.LoadRules(ruleDefs, ruleOff)
	analyzerDefs, analyzerOff := analyzers.Generate(false, keep).AnalyzersInfo()
	g.LoadAnalyzers(analyzerDefs, analyzerOff)

	pkg := &packages.Package{
		Name:       pass.Pkg.Name(),
		PkgPath:    pass.Pkg.Path(),
		Fset:       pass.Fset,
		Syntax:     pass.Files,
		Types:      pass.Pkg,
		TypesInfo:  pass.TypesInfo,
		TypesSizes: pass.TypesSizes,
	}
	for _, f := range pass.Files {
		pkg.CompiledGoFiles = append(pkg.CompiledGoFiles, pass.Fset.File(f.Pos()).Name())
	}
	g.CheckRules(pkg)
	if ssa, ok := pass.ResultOf[buildssa.Analyzer].(*buildssa.SSA); ok && ssa != nil {
		g.CheckAnalyzersWithSSA(pkg, ssa)
	}
	issues, _, _ := g.Report()

	// Tests are not attack surface: their fixed commands, weak random
	// numbers and temporary files are no finding.
	issues = slices.DeleteFunc(issues, func(iss *issue.Issue) bool {
		return (iss.Confidence < issue.Medium && !lowConfidenceKept[iss.RuleID]) || strings.HasSuffix(iss.File, "_test.go") ||
			(iss.RuleID == "G204" && iss.What == "Subprocess launched with variable")
	})
	byLine := map[string]map[string]bool{}
	for _, iss := range issues {
		if byLine[iss.File+":"+iss.Line] == nil {
			byLine[iss.File+":"+iss.Line] = map[string]bool{}
		}
		byLine[iss.File+":"+iss.Line][iss.RuleID] = true
	}
	for _, iss := range issues {
		if twin, ok := taintTwin[iss.RuleID]; ok && byLine[iss.File+":"+iss.Line][twin] {
			continue
		}
		pos, end := position(pass, iss)
		if !pos.IsValid() {
			continue
		}
		what := iss.What
		if iss.Cwe != nil && iss.Cwe.ID != "" {
			what += "\n" + iss.Cwe.SprintID() + ": " + iss.Cwe.Name + " (" + iss.Cwe.SprintURL() + ")"
		}
		pass.Report(analysis.Diagnostic{Pos: pos, End: end, Category: iss.RuleID, Message: what})
	}
	return nil, nil
}

// position finds an issue's file, line ("12" or "12-14") and column in
// the pass.
func position(pass *analysis.Pass, iss *issue.Issue) (token.Pos, token.Pos) {
	var tf *token.File
	for _, f := range pass.Files {
		if t := pass.Fset.File(f.Pos()); t != nil && t.Name() == iss.File {
			tf = t
			break
		}
	}
	if tf == nil {
		return token.NoPos, token.NoPos
	}
	first, last, _ := strings.Cut(iss.Line, "-")
	line, err := strconv.Atoi(first)
	if err != nil || line < 1 || line > tf.LineCount() {
		return token.NoPos, token.NoPos
	}
	pos := tf.LineStart(line)
	if col, err := strconv.Atoi(iss.Col); err == nil && col > 1 {
		if p := int(pos) + col - 1; p < tf.Base()+tf.Size() {
			pos = token.Pos(p)
		}
	}
	end := pos
	if l, err := strconv.Atoi(last); err == nil && l > line && l <= tf.LineCount() {
		end = tf.LineStart(l)
		// Point inside line l, so it counts as covered.
		if int(end) < tf.Base()+tf.Size() {
			end++
		}
	}
	return pos, end
}

// gosecRule is the finding rule of a gosec diagnostic.
func gosecRule(id string) string { return fmt.Sprintf("gosec:%s", id) }
