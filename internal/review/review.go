// Package review owns reviews and their findings: the records the read API
// serves and the pipeline writes.
package review

import (
	"time"
)

// Verdicts, from best to worst.
const (
	VerdictApprove        = "approve"
	VerdictComment        = "comment"
	VerdictRequestChanges = "request_changes"
)

// Severities, most severe first.
var Severities = []string{"critical", "high", "medium", "low", "info"}

// Categories of finding.
var Categories = []string{"security", "logic", "performance", "tests", "maintainability"}

// Engines that produce findings.
const (
	EngineBuiltin = "builtin"
	EngineLLM     = "llm"
)

// Review is a synthesized review of one pull-request head: the spec's list
// item. Findings are loaded only for the full review.
type Review struct {
	ID                   string    `json:"id"`
	Owner                string    `json:"owner"`
	Repo                 string    `json:"repo"`
	PRNumber             int       `json:"pr_number"`
	HeadSHA              string    `json:"head_sha"`
	Verdict              string    `json:"verdict"`
	SynthesizedAt        time.Time `json:"synthesized_at"`
	SpecialistsSucceeded []string  `json:"specialists_succeeded"`
	FindingsCount        int       `json:"findings_count"`
	Summary              string    `json:"summary"`

	// Not in the list item; kept for the pipeline and the platform.
	RepositoryID      string   `json:"-"`
	BaseSHA           string   `json:"-"`
	SpecialistsFailed []string `json:"-"`
	// Duration is how long the review took, from its job's start to
	// synthesis; zero when not known (reviews stored before it was kept).
	Duration time.Duration `json:"-"`
}

// Full is a review with its findings, ranked.
type Full struct {
	Review
	Findings []Finding `json:"findings"`
}

// Finding is one problem a specialist found, as the spec lists it, plus what
// the store keeps for its context.
type Finding struct {
	ID             string  `json:"id"`
	Specialist     string  `json:"specialist"`
	Category       string  `json:"category"`
	Severity       string  `json:"severity"`
	Path           string  `json:"path"`
	Line           int     `json:"line"`
	Headline       string  `json:"headline"`
	Body           string  `json:"body"`
	SuggestedPatch *string `json:"suggested_patch"`

	EndLine     int       `json:"-"`
	Fingerprint string    `json:"-"`
	Engine      string    `json:"-"`
	Rule        string    `json:"-"`
	Model       string    `json:"-"`
	DetectedAt  time.Time `json:"-"`
	Excerpt     Excerpt   `json:"-"`
}

// Detail is a finding fetched alone: the finding, its review and its context.
type Detail struct {
	Finding
	ReviewID string  `json:"review_id"`
	Context  Context `json:"context"`
}

// Context says where a finding comes from and shows the code around it.
type Context struct {
	Provenance Provenance `json:"provenance"`
	Excerpt    Excerpt    `json:"excerpt"`
}

// Provenance names what produced a finding, on which commit, and when. A
// problem both engines found is one finding: Engine and Rule are the
// built-in engine's, Model the model that also reported it, and Engines
// lists both.
type Provenance struct {
	Specialist string    `json:"specialist"`
	Engine     string    `json:"engine"`
	Engines    []string  `json:"engines"`
	Rule       string    `json:"rule,omitempty"`
	Model      string    `json:"model,omitempty"`
	HeadSHA    string    `json:"head_sha"`
	DetectedAt time.Time `json:"detected_at"`
}

// EnginesOf lists the engines that found a finding: its engine, and the
// LLM too when a built-in finding carries the model that also reported it.
func EnginesOf(f Finding) []string {
	if f.Engine == EngineBuiltin && f.Model != "" {
		return []string{EngineBuiltin, EngineLLM}
	}
	return []string{f.Engine}
}

// Excerpt is the source around a finding at the reviewed head.
type Excerpt struct {
	Path      string `json:"path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
	Lines     []Line `json:"lines"`
}

// Line is one numbered source line.
type Line struct {
	Number int    `json:"number"`
	Text   string `json:"text"`
}
