// Package posting holds what posting a review on a pull request means on
// every platform: where each finding goes (inline, on the file, in the
// body), what a comment and the review's body say, the hidden markers by
// which a finding or a review already posted is known, and the record in
// quorum's database of how a review's posting settled and which notices
// were given.
package posting

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/review"
)

// Platform is what posting needs to know of the platform it posts to.
type Platform struct {
	// Name is the platform's name as the review's body says it ("GitHub").
	Name string
	// Suggestions: the platform renders ```suggestion blocks, which the
	// author can apply; without them a patch is shown in a ```diff block.
	Suggestions bool
	// FileComments: the platform takes a comment on a file as a whole;
	// without them a finding outside the diff's hunks goes into the body.
	FileComments bool
	// FileURL returns the address of a file at a commit; the body's lists
	// add #Lx-Ly to it.
	FileURL func(commit, path string) string
	// MaxComments bounds the inline and file comments of one review; the
	// rest go into its body.
	MaxComments int
}

// Comment is a finding placed on the pull request: on lines
// StartLine..Line of the head (Line alone when StartLine is 0), or on its
// file as a whole when Line is 0.
type Comment struct {
	Finding   review.Finding
	Line      int
	StartLine int
	Body      string
}

// Plan is what a review posts where.
type Plan struct {
	Summary   string
	Inline    []Comment
	FileLevel []Comment
	// Overflow is past MaxComments or outside the diff; Refused is what
	// the platform would not place; both are listed in the body.
	Overflow []review.Finding
	Refused  []review.Finding
	// Repeated counts the findings already commented on an earlier head.
	Repeated int

	platform Platform
}

// PlanReview decides each finding's place: inline on its lines when they
// are in a hunk of the platform's diff; a file comment when its file is in
// the diff but its lines are not and the platform takes file comments,
// else the body; the body past MaxComments or when its file is not in the
// diff at all; and nowhere when it was already posted on an earlier head
// (posted holds those fingerprints). files nil means the platform's diff
// is unknown: every finding is tried inline.
func PlanReview(pf Platform, full review.Full, files map[string]*change.File, posted map[string]bool) *Plan {
	p := &Plan{Summary: full.Summary, platform: pf}
	placed := 0
	for _, f := range full.Findings {
		if f.Fingerprint != "" && posted[f.Fingerprint] {
			p.Repeated++
			continue
		}
		if placed >= pf.MaxComments {
			p.Overflow = append(p.Overflow, f)
			continue
		}
		if f.Line <= 0 {
			// A finding on the file as a whole.
			if !pf.FileComments {
				p.Overflow = append(p.Overflow, f)
				continue
			}
			placed++
			p.FileLevel = append(p.FileLevel, Comment{Finding: f, Body: CommentBody(f, "")})
			continue
		}
		c := Comment{Finding: f, Line: f.Line}
		if f.EndLine > f.Line {
			c.StartLine, c.Line = f.Line, f.EndLine
		}
		var file *change.File
		if files != nil {
			if file = files[f.Path]; file == nil {
				p.Overflow = append(p.Overflow, f)
				continue
			}
		}
		suggestion := ""
		if start, end, text, ok := SuggestionFor(f); ok && pf.Suggestions && InHunk(file, start, end) {
			c.StartLine, c.Line, suggestion = start, end, text
			if start == end {
				c.StartLine = 0
			}
		}
		c.Body = CommentBody(f, suggestion)
		if file != nil && !InHunk(file, max(c.StartLine, 1), c.Line) {
			if InHunk(file, c.Line, c.Line) {
				c.StartLine = 0 // the range leaves the hunk: its last line alone
			} else {
				if !pf.FileComments {
					p.Overflow = append(p.Overflow, f)
					continue
				}
				placed++
				p.FileLevel = append(p.FileLevel, c)
				continue
			}
		}
		placed++
		p.Inline = append(p.Inline, c)
	}
	return p
}

// InHunk reports whether lines start..end (at head) lie in one hunk of
// file; a nil file (unknown diff) holds every line.
func InHunk(file *change.File, start, end int) bool {
	if file == nil {
		return true
	}
	if start > end {
		start = end
	}
	h := file.HunkFor(end)
	return h != nil && file.HunkFor(start) == h
}

// SuggestionFor turns a one-hunk suggested patch into the head lines it
// replaces and their replacement, for a ```suggestion block.
func SuggestionFor(f review.Finding) (start, end int, text string, ok bool) {
	if f.SuggestedPatch == nil || *f.SuggestedPatch == "" {
		return 0, 0, "", false
	}
	files, err := change.ParseDiff(strings.NewReader(*f.SuggestedPatch))
	if err != nil || len(files) != 1 || len(files[0].Hunks) != 1 || files[0].Path() != f.Path {
		return 0, 0, "", false
	}
	h := files[0].Hunks[0]
	if h.OldLines == 0 {
		return 0, 0, "", false // an insertion replaces no line to comment on
	}
	var b strings.Builder
	for _, l := range h.Lines {
		if l.Kind != change.KindDeleted {
			b.WriteString(l.Text)
			b.WriteByte('\n')
		}
	}
	return h.OldStart, h.OldStart + h.OldLines - 1, b.String(), true
}

var severityIcon = map[string]string{"critical": "🛑", "high": "🔴", "medium": "🟠", "low": "🟡", "info": "🔵"}

// CommentBody is a finding's comment: headline, explanation, the
// suggestion (a ```suggestion block) or else the patch (a ```diff block),
// and the hidden fingerprint.
func CommentBody(f review.Finding, suggestion string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s **%s** · %s · %s\n\n", severityIcon[f.Severity], Inert(f.Headline), f.Severity, f.Category)
	if f.Body != "" {
		b.WriteString(Inert(strings.TrimSpace(f.Body)))
		b.WriteString("\n\n")
	}
	switch {
	case suggestion != "":
		fence := FenceFor(suggestion)
		fmt.Fprintf(&b, "%ssuggestion\n%s%s\n\n", fence, suggestion, fence)
	case f.SuggestedPatch != nil && *f.SuggestedPatch != "":
		fence := FenceFor(*f.SuggestedPatch)
		fmt.Fprintf(&b, "<details><summary>Suggested patch</summary>\n\n%sdiff\n%s\n%s\n\n</details>\n\n", fence, strings.TrimSuffix(*f.SuggestedPatch, "\n"), fence)
	}
	fmt.Fprintf(&b, "<sub>%s</sub>\n", Provenance(f))
	if f.Fingerprint != "" {
		b.WriteString(Marker(f.Fingerprint))
	}
	return b.String()
}

// FenceFor returns a code fence longer than any run of backticks in s.
func FenceFor(s string) string {
	n, run := 3, 0
	for _, r := range s {
		if r == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", n)
}

// Provenance says who found a finding: quorum, the specialist, the rule.
func Provenance(f review.Finding) string {
	p := "quorum · " + f.Specialist
	if f.Rule != "" {
		p += " · " + f.Rule
	}
	return p
}

// Body is the review's body: the summary, the findings past the inline
// limit or outside the diff, and those the platform refused.
func (p *Plan) Body(head string) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(p.Summary))
	if b.Len() == 0 {
		b.WriteString("quorum reviewed this change.")
	}
	b.WriteString("\n")
	// Refused first: the overflow may be cut to fit the platform's limit.
	if len(p.Refused) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>%d finding(s) %s would not place as comments</summary>\n\n", len(p.Refused), p.platform.Name)
		p.list(&b, p.Refused, head)
		b.WriteString("\n</details>\n")
	}
	if len(p.Overflow) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>%d more finding(s) (beyond %d inline comments, or outside the diff)</summary>\n\n", len(p.Overflow), p.platform.MaxComments)
		p.list(&b, p.Overflow, head)
		b.WriteString("\n</details>\n")
	}
	if p.Repeated > 0 {
		fmt.Fprintf(&b, "\n%d finding(s) already commented on an earlier push are not repeated.\n", p.Repeated)
	}
	return b.String()
}

// maxBody is kept below GitHub's limit on a review's body (65,536
// characters), with room for what follows a list; Gitea's is larger.
const maxBody = 60000

func (p *Plan) list(b *strings.Builder, fs []review.Finding, head string) {
	for i, f := range fs {
		if b.Len() > maxBody {
			fmt.Fprintf(b, "- … and %d more: quorum's API (`GET /v1/reviews`) has them all.\n", len(fs)-i)
			return
		}
		// The pull request's author names its files: a name must not
		// open an HTML comment that hides what follows, in the text or
		// in the link.
		where, anchor := Inert(f.Path), ""
		if f.Line > 0 {
			where += fmt.Sprintf("#L%d", f.Line)
			anchor = fmt.Sprintf("#L%d-L%d", f.Line, max(f.EndLine, f.Line))
		}
		fmt.Fprintf(b, "- %s **%s** (%s, %s) [`%s`](%s%s)", severityIcon[f.Severity], Inert(f.Headline), f.Severity,
			f.Specialist, where, p.platform.FileURL(head, escapePath(f.Path)), anchor)
		if f.Fingerprint != "" {
			b.WriteString(" " + Marker(f.Fingerprint))
		}
		b.WriteString("\n")
	}
}

// marker is the hidden fingerprint at the end of every comment quorum
// posts, by which a finding already posted is not posted again.
// Only a marker that ends the comment counts: finding text is escaped
// (Inert) and cannot end a comment, so text from the change or the LLM
// cannot pass for a marker.
var marker = regexp.MustCompile(`<!-- quorum:fp=([A-Za-z0-9_:.-]+) -->\s*$`)

// Marker is the hidden marker of a finding's fingerprint.
func Marker(fp string) string { return "<!-- quorum:fp=" + fp + " -->" }

// FingerprintOf returns the fingerprint whose marker ends a comment's
// body, if one does. Callers count only comments quorum's own account
// wrote: anyone can write a marker.
func FingerprintOf(body string) (string, bool) {
	m := marker.FindStringSubmatch(body)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// ReviewMarker is the hidden marker at the end of a posted review's
// body, by which a retried post finds that the review is already there.
func ReviewMarker(reviewID string) string { return "<!-- quorum:review=" + reviewID + " -->" }

// HasReviewMarker reports whether a review's body ends with the marker of
// reviewID.
func HasReviewMarker(body, reviewID string) bool {
	return strings.HasSuffix(strings.TrimSpace(body), ReviewMarker(reviewID))
}

// escapePath escapes each segment of a file's path for a URL.
func escapePath(path string) string {
	segments := strings.Split(path, "/")
	for i, s := range segments {
		segments[i] = url.PathEscape(s)
	}
	return strings.Join(segments, "/")
}

// Inert keeps text quorum did not write (headlines and bodies come from
// analyzers and the LLM, which read the pull request) from opening an HTML
// comment, so it can neither hide text nor forge a marker.
func Inert(s string) string { return strings.ReplaceAll(s, "<!--", "&lt;!--") }

// Short is a commit's abbreviation in what quorum writes.
func Short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
