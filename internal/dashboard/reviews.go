package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/token"
)

// reviewsPerPage is the review list's page size, the API's default.
const reviewsPerPage = 20

// verdicts are the review list's verdict filter's choices, best first.
var verdicts = []string{review.VerdictApprove, review.VerdictComment, review.VerdictRequestChanges}

// reviewRoutes adds the pages of reviews and findings. As in the API, a
// review's findings come with the review (reviews:read); their context —
// the source excerpt and the finding's own page — needs findings:read, as
// GET /v1/findings/{id} does.
func (s *Server) reviewRoutes(mux *routeMux) {
	mux.Handle("GET "+Prefix+"reviews", s.page(token.ScopeReviewsRead, s.reviewList))
	mux.Handle("GET "+Prefix+"reviews/{id}", s.page(token.ScopeReviewsRead, s.reviewPage))
	mux.Handle("GET "+Prefix+"findings/{id}", s.page(token.ScopeFindingsRead, s.findingPage))
}

// reviewFilter is the review list's filter as the form shows it: what was
// asked, as typed.
type reviewFilter struct {
	Repo, PR, Verdict string
}

type reviewListView struct {
	Filter   reviewFilter
	Verdicts []string
	Reviews  []review.Review
	// Next is the address of the next page, "" on the last.
	Next string
}

// reviewList lists the account's reviews, newest first: every repository's,
// or one repository's, pull request's and verdict's.
func (s *Server) reviewList(w http.ResponseWriter, r *http.Request, sess *session) error {
	f, q, err := parseReviewFilter(r)
	if err != nil {
		return err
	}
	q.AccountID, q.Limit = sess.principal.AccountID, reviewsPerPage
	page, err := s.reviews.Search(r.Context(), q)
	if errors.Is(err, review.ErrNotFound) {
		return notFound("Your account has no repository %s/%s.", q.Owner, q.Repo)
	}
	if err != nil {
		return err
	}
	v := reviewListView{Filter: f, Verdicts: verdicts, Reviews: page.Reviews}
	if page.Next != nil {
		next := url.Values{"before": {fmt.Sprintf("%d.%s", page.Next.SynthesizedAt, page.Next.ID)}}
		for name, value := range map[string]string{"repo": f.Repo, "pr": f.PR, "verdict": f.Verdict} {
			if value != "" {
				next.Set(name, value)
			}
		}
		v.Next = Prefix + "reviews?" + next.Encode()
	}
	title := "Reviews"
	if f.Repo != "" {
		title = "Reviews of " + q.Owner + "/" + q.Repo
	}
	if q.PR != 0 {
		title += "#" + strconv.Itoa(q.PR)
	}
	s.render(w, r, http.StatusOK, "reviews", sess, title, v)
	return nil
}

// parseReviewFilter validates the review list's query as the API validates
// GET /v1/reviews's: a parameter given twice, not decodable, or not valid
// UTF-8 text is refused rather than dropped, since a filter silently
// dropped answers another question. An empty parameter, as an empty form
// field sends, filters nothing.
func parseReviewFilter(r *http.Request) (reviewFilter, review.SearchQuery, error) {
	var (
		f reviewFilter
		q review.SearchQuery
	)
	values, err := pageQuery(r)
	if err != nil {
		return f, q, err
	}
	get := func(name string) (string, error) { return singleParam(values, name) }
	if f.Repo, err = get("repo"); err != nil {
		return f, q, err
	}
	if f.PR, err = get("pr"); err != nil {
		return f, q, err
	}
	if f.Verdict, err = get("verdict"); err != nil {
		return f, q, err
	}
	before, err := readBefore(values, id.Review)
	if err != nil {
		return f, q, err
	}

	if q.Owner, q.Repo, err = splitRepo(f.Repo); err != nil {
		return f, q, err
	}
	if f.PR != "" {
		n, err := strconv.Atoi(f.PR)
		if err != nil || n < 1 {
			return f, q, badRequest("The pull request %q is not a pull request number, a whole number of at least 1.", f.PR)
		}
		if q.Owner == "" {
			return f, q, badRequest("A pull request number needs its repository: give the repository as owner/name too.")
		}
		q.PR = n
	}
	if f.Verdict != "" {
		if !slices.Contains(verdicts, f.Verdict) {
			return f, q, badRequest("The verdict %q is not one of %s.", f.Verdict, strings.Join(verdicts, ", "))
		}
		q.Verdict = f.Verdict
	}
	if before != nil {
		q.After = &review.Cursor{SynthesizedAt: before.CreatedAt, ID: before.ID}
	}
	return f, q, nil
}

// pageQuery is the request's query; one that cannot be decoded is a 400
// rather than silently less (as url.URL.Query would have it).
func pageQuery(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("The address's query could not be read (%v). Use the page's own forms and links.", err)
	}
	return q, nil
}

// singleParam is a query parameter, trimmed, "" when absent; given twice,
// or not UTF-8 text of at most 512 bytes without NUL, it is a 400, as the
// API's are: a filter silently dropped answers another question.
func singleParam(q url.Values, name string) (string, error) {
	vs := q[name]
	switch {
	case len(vs) > 1:
		return "", badRequest("The %q parameter is given more than once; give it once.", name)
	case len(vs) == 0:
		return "", nil
	case !utf8.ValidString(vs[0]) || strings.ContainsRune(vs[0], 0) || len(vs[0]) > 512:
		return "", badRequest("The %q parameter must be UTF-8 text without NUL characters, at most 512 bytes.", name)
	}
	return strings.TrimSpace(vs[0]), nil
}

// splitRepo splits a repository parameter, owner/name; "" is no
// repository.
func splitRepo(repo string) (owner, name string, err error) {
	if repo == "" {
		return "", "", nil
	}
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", badRequest("The repository %q is not owner/name, e.g. acme/widgets.", repo)
	}
	return owner, name, nil
}

// reviewView is a review as its page shows it.
type reviewView struct {
	review.Review
	PullRequestURL string
	// NotAnalysed are the summary's lines about what was not analysed,
	// shown first; Summary is the rest.
	NotAnalysed []string
	Summary     string
	// ShowContext is whether the token may see the findings' context (the
	// source excerpt, the finding page): findings:read.
	ShowContext bool
	Files       []fileFindings
}

// fileFindings are a review's findings in one file, in rank order.
type fileFindings struct {
	Path     string
	Findings []findingView
}

// findingView is a finding with its excerpt and suggested patch laid out
// for the page.
type findingView struct {
	review.Finding
	Lines []excerptLine
	Patch []diffLine
}

// excerptLine is a numbered source line; Hit marks the finding's lines.
type excerptLine struct {
	Number int
	Text   string
	Hit    bool
}

// diffLine is a line of a suggested patch and its class: add, del, hunk
// (headers and @@ lines), or "" for context. The line keeps its +/- sign,
// so the page does not rely on colour.
type diffLine struct {
	Class, Text string
}

// reviewPage shows one review: its verdict and summary, what ran, and its
// findings by file.
func (s *Server) reviewPage(w http.ResponseWriter, r *http.Request, sess *session) error {
	rid := r.PathValue("id")
	if !id.Valid(id.Review, rid) {
		return notFound("There is no review %s.", rid)
	}
	ctx := r.Context()
	full, err := s.reviews.Get(ctx, sess.principal.AccountID, rid)
	if errors.Is(err, review.ErrNotFound) {
		return notFound("There is no review %s.", rid)
	}
	if err != nil {
		return err
	}
	acct, err := account.Get(ctx, s.db.Reader(), sess.principal.AccountID)
	if err != nil {
		return err
	}
	v := reviewView{
		Review:         full.Review,
		PullRequestURL: s.pullRequestURL(acct.Platform, full.Owner, full.Repo, full.PRNumber),
		ShowContext:    sess.principal.Has(token.ScopeFindingsRead),
		Files:          byFile(full.Findings),
	}
	v.NotAnalysed, v.Summary = splitSummary(full.Summary)
	s.render(w, r, http.StatusOK, "review", sess, fmt.Sprintf("Review of %s/%s#%d", full.Owner, full.Repo, full.PRNumber), v)
	return nil
}

// byFile groups findings by path, files in the order of their first
// (highest ranked) finding.
func byFile(findings []review.Finding) []fileFindings {
	var files []fileFindings
	index := map[string]int{}
	for _, f := range findings {
		i, ok := index[f.Path]
		if !ok {
			i = len(files)
			index[f.Path] = i
			files = append(files, fileFindings{Path: f.Path})
		}
		files[i].Findings = append(files[i].Findings, newFindingView(f))
	}
	return files
}

func newFindingView(f review.Finding) findingView {
	v := findingView{Finding: f}
	last := max(f.EndLine, f.Line)
	for _, l := range f.Excerpt.Lines {
		v.Lines = append(v.Lines, excerptLine{Number: l.Number, Text: l.Text, Hit: l.Number >= f.Line && l.Number <= last})
	}
	if f.SuggestedPatch != nil {
		v.Patch = diffLines(*f.SuggestedPatch)
	}
	return v
}

// diffLines classes a unified diff's lines for colour.
func diffLines(patch string) []diffLine {
	var out []diffLine
	for line := range strings.Lines(strings.TrimRight(patch, "\n")) {
		line = strings.TrimSuffix(line, "\n")
		class := ""
		switch {
		case strings.HasPrefix(line, "+++ "), strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "@@"),
			strings.HasPrefix(line, "diff "), strings.HasPrefix(line, "index "):
			class = "hunk"
		case strings.HasPrefix(line, "+"):
			class = "add"
		case strings.HasPrefix(line, "-"):
			class = "del"
		}
		out = append(out, diffLine{Class: class, Text: line})
	}
	return out
}

// splitSummary takes out of a summary the lines that say what was not
// analysed or reviewed — a "Not analysed:" line with the list under it,
// "Not reviewed:", and any line naming something "not analysed" — so the
// page shows them first: they say what the verdict does not cover. A
// heading left without its items goes too.
func splitSummary(summary string) (notAnalysed []string, rest string) {
	var kept []string
	inGap := false
	// heading is the index in kept of the "…:" line whose "- " items are
	// being read, -1 when none; took and left count what became of them.
	heading, took, left := -1, 0, 0
	endList := func() {
		if heading >= 0 && took > 0 && left == 0 {
			kept = slices.Delete(kept, heading, heading+1)
		}
		heading, took, left = -1, 0, 0
	}
	for line := range strings.SplitSeq(summary, "\n") {
		item := strings.HasPrefix(line, "- ")
		gapLine := strings.HasPrefix(line, "Not reviewed:") || strings.Contains(strings.ToLower(line), "not analysed")
		switch {
		case strings.HasPrefix(line, "Not analysed:"):
			endList()
			inGap = true
			notAnalysed = append(notAnalysed, line)
		case item && inGap:
			notAnalysed = append(notAnalysed, line)
		case item && gapLine:
			took++
			notAnalysed = append(notAnalysed, line)
		case item:
			left++
			kept = append(kept, line)
		default:
			inGap = false
			endList()
			if gapLine {
				notAnalysed = append(notAnalysed, line)
				continue
			}
			if strings.HasSuffix(line, ":") {
				heading = len(kept)
			}
			kept = append(kept, line)
		}
	}
	endList()
	// A line taken from between two blank lines leaves one blank line.
	kept = slices.CompactFunc(kept, func(a, b string) bool { return a == "" && b == "" })
	return notAnalysed, strings.TrimSpace(strings.Join(kept, "\n"))
}

// findingPageView is one finding with where it comes from.
type findingPageView struct {
	findingView
	ReviewID   string
	Provenance review.Provenance
}

// findingPage shows one finding: what, where, the code around it, the
// suggested patch, and what produced it on which commit.
func (s *Server) findingPage(w http.ResponseWriter, r *http.Request, sess *session) error {
	fid := r.PathValue("id")
	if !id.Valid(id.Finding, fid) {
		return notFound("There is no finding %s.", fid)
	}
	d, err := s.reviews.GetFinding(r.Context(), sess.principal.AccountID, fid)
	if errors.Is(err, review.ErrNotFound) {
		return notFound("There is no finding %s.", fid)
	}
	if err != nil {
		return err
	}
	v := findingPageView{findingView: newFindingView(d.Finding), ReviewID: d.ReviewID, Provenance: d.Context.Provenance}
	s.render(w, r, http.StatusOK, "finding", sess, d.Headline, v)
	return nil
}
