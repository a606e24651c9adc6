package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
)

// Repo creates (or finds) the account login and its repository owner/name.
func Repo(t testing.TB, db *store.DB, login, owner, name string) account.Repository {
	t.Helper()
	ctx := context.Background()
	a, err := account.Ensure(ctx, db.Writer(), account.PlatformGitHub, login, "Organization")
	if err != nil {
		t.Fatal(err)
	}
	r, err := account.EnsureRepository(ctx, db.Writer(), a.ID, owner, name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// NewReview returns a plausible review of repo's pull request pr with n
// findings, synthesized at at; Create has not been called.
func NewReview(repo account.Repository, pr, n int, at time.Time) review.Full {
	r := review.Full{Review: review.Review{
		Owner: repo.Owner, Repo: repo.Name, RepositoryID: repo.ID, PRNumber: pr,
		HeadSHA: fmt.Sprintf("%040x", at.UnixNano()), BaseSHA: fmt.Sprintf("%040x", at.UnixNano()-1),
		Verdict: review.VerdictApprove, SynthesizedAt: at.UTC().Truncate(time.Microsecond),
		SpecialistsSucceeded: []string{"logic", "performance", "security", "tests"},
		Summary:              fmt.Sprintf("Review of #%d: %d findings.", pr, n),
	}}
	if n > 0 {
		r.Verdict = review.VerdictRequestChanges
	}
	for i := range n {
		var patch *string
		if i%2 == 0 {
			p := fmt.Sprintf("--- a/db/query%d.go\n+++ b/db/query%d.go\n@@ -%d,1 +%d,1 @@\n-\trows, err := db.Query(fmt.Sprintf(q, id))\n+\trows, err := db.Query(q, id)\n", i, i, 10+i, 10+i)
			patch = &p
		}
		r.Findings = append(r.Findings, review.Finding{
			Specialist: "security", Category: "security", Severity: review.Severities[i%len(review.Severities)],
			Path: fmt.Sprintf("db/query%d.go", i), Line: 10 + i, EndLine: 10 + i,
			Headline:       "SQL built with fmt.Sprintf is passed to db.Query",
			Body:           "The query text is formatted from input, which allows SQL injection. Pass the value as a parameter instead.",
			SuggestedPatch: patch,
			Fingerprint:    fmt.Sprintf("fp%04d", i), Engine: review.EngineBuiltin, Rule: "gosec:G201",
			Excerpt: review.Excerpt{Path: fmt.Sprintf("db/query%d.go", i), StartLine: 8 + i, EndLine: 12 + i, Lines: []review.Line{
				{Number: 8 + i, Text: "func find(db *sql.DB, id string) error {"},
				{Number: 9 + i, Text: "\tq := \"SELECT * FROM t WHERE id = '%s'\""},
				{Number: 10 + i, Text: "\trows, err := db.Query(fmt.Sprintf(q, id))"},
				{Number: 11 + i, Text: "\tif err != nil {"},
				{Number: 12 + i, Text: "\t\treturn err"},
			}},
		})
	}
	return r
}

// Review stores a review made by NewReview and returns it with its ids.
func Review(t testing.TB, db *store.DB, repo account.Repository, pr, n int, at time.Time) review.Full {
	t.Helper()
	r := NewReview(repo, pr, n, at)
	if err := review.NewStore(db).Create(context.Background(), db.Writer(), &r); err != nil {
		t.Fatal(err)
	}
	return r
}
