package review_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/account"
	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

type fixture struct {
	db      *store.DB
	reviews *review.Store
	repo    account.Repository // acme's acme/widgets
}

func forEachBackend(t *testing.T, fn func(t *testing.T, f fixture)) {
	t.Helper()
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		db := b.Open(t)
		fn(t, fixture{db: db, reviews: review.NewStore(db), repo: storetest.Repo(t, db, "acme", "acme", "widgets")})
	})
}

var base = time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)

func TestCreateThenGet(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		r := storetest.NewReview(f.repo, 42, 4, base)
		// Nanoseconds in another zone: stored and returned as UTC microseconds.
		paris := time.FixedZone("CET", 3600)
		r.SynthesizedAt = time.Date(2026, 11, 23, 3, 4, 5, 123456789, paris)
		r.SpecialistsSucceeded = []string{"logic", "security", "tests"}
		r.SpecialistsFailed = []string{"performance"}
		r.Verdict = review.VerdictRequestChanges
		// Ids that sort against the order of the findings, so only position
		// can rank them.
		for i := range r.Findings {
			r.Findings[i].ID = id.New(id.Finding, base.Add(time.Duration(len(r.Findings)-i)*time.Second))
		}
		llm := &r.Findings[1]
		llm.Engine, llm.Rule, llm.Model, llm.Specialist, llm.Category = review.EngineLLM, "", "claude-sonnet-4-5", "logic", "logic"
		llm.EndLine = llm.Line + 3
		llm.DetectedAt = time.Date(2026, 11, 23, 2, 59, 0, 999999999, paris)
		empty := ""
		r.Findings[3].SuggestedPatch = &empty // an empty patch is not a missing one
		r.Findings[2].Excerpt.Lines = nil
		r.FindingsCount = 99 // Create counts
		// Kept in whole milliseconds.
		r.Duration = 83*time.Second + 250*time.Millisecond + 999*time.Microsecond

		if err := f.reviews.Create(ctx, f.db.Writer(), &r); err != nil {
			t.Fatal(err)
		}
		if !id.Valid(id.Review, r.ID) {
			t.Errorf("Create gave the review id %q", r.ID)
		}
		if r.FindingsCount != 4 {
			t.Errorf("findings_count %d, want 4", r.FindingsCount)
		}
		wantAt := time.Date(2026, 11, 23, 2, 4, 5, 123456000, time.UTC)
		if r.SynthesizedAt != wantAt {
			t.Errorf("after Create synthesized_at = %v, want %v", r.SynthesizedAt, wantAt)
		}

		if want := 83*time.Second + 250*time.Millisecond; r.Duration != want {
			t.Errorf("after Create duration = %v, want %v", r.Duration, want)
		}

		got, err := f.reviews.Get(ctx, f.repo.AccountID, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.SynthesizedAt != wantAt || got.SynthesizedAt.Location() != time.UTC {
			t.Errorf("synthesized_at = %v, want %v in UTC", got.SynthesizedAt, wantAt)
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("Get returned\n%+v\nCreate stored\n%+v", got, r)
		}
		if got.Findings[0].SuggestedPatch == nil || got.Findings[1].SuggestedPatch != nil ||
			got.Findings[3].SuggestedPatch == nil || *got.Findings[3].SuggestedPatch != "" {
			t.Errorf("suggested patches: null and non-null not kept apart: %v %v %v",
				got.Findings[0].SuggestedPatch, got.Findings[1].SuggestedPatch, got.Findings[3].SuggestedPatch)
		}
		if got.Findings[2].Excerpt.Lines == nil || len(got.Findings[2].Excerpt.Lines) != 0 {
			t.Errorf("a finding without excerpt lines came back with %#v, want an empty list", got.Findings[2].Excerpt.Lines)
		}
		var ids []string
		for _, fd := range got.Findings {
			ids = append(ids, fd.ID)
		}
		want := []string{r.Findings[0].ID, r.Findings[1].ID, r.Findings[2].ID, r.Findings[3].ID}
		if !slices.Equal(ids, want) {
			t.Errorf("findings in order %v, want by position %v", ids, want)
		}

		// A finding alone, with its provenance.
		d, err := f.reviews.GetFinding(ctx, f.repo.AccountID, llm.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantDetail := review.Detail{
			Finding:  r.Findings[1],
			ReviewID: r.ID,
			Context: review.Context{
				Provenance: review.Provenance{
					Specialist: "logic", Engine: review.EngineLLM, Engines: []string{review.EngineLLM}, Model: "claude-sonnet-4-5",
					HeadSHA: r.HeadSHA, DetectedAt: time.Date(2026, 11, 23, 1, 59, 0, 999999000, time.UTC),
				},
				Excerpt: r.Findings[1].Excerpt,
			},
		}
		if !reflect.DeepEqual(d, wantDetail) {
			t.Errorf("GetFinding returned\n%+v\nwant\n%+v", d, wantDetail)
		}
		builtin, err := f.reviews.GetFinding(ctx, f.repo.AccountID, r.Findings[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if p := builtin.Context.Provenance; p.Engine != review.EngineBuiltin || !slices.Equal(p.Engines, []string{review.EngineBuiltin}) ||
			p.Rule != "gosec:G201" || p.Model != "" || !p.DetectedAt.Equal(wantAt) {
			t.Errorf("provenance of a built-in finding: %+v", p)
		}
	})
}

func TestCreateWithoutSpecialists(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, f fixture) {
		r := storetest.NewReview(f.repo, 1, 0, base)
		r.SpecialistsSucceeded, r.SpecialistsFailed = nil, nil
		if err := f.reviews.Create(context.Background(), f.db.Writer(), &r); err != nil {
			t.Fatal(err)
		}
		got, err := f.reviews.Get(context.Background(), f.repo.AccountID, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.SpecialistsSucceeded == nil || got.SpecialistsFailed == nil || got.Findings == nil {
			t.Errorf("empty lists came back as nil: %+v", got)
		}
		if !reflect.DeepEqual(got.Review, r.Review) || len(got.Findings) != 0 {
			t.Errorf("Get returned\n%+v\nCreate stored\n%+v", got, r)
		}
	})
}

// create stores reviews of repo at the given offsets from base, on the given
// pull requests, and returns their ids.
func create(t *testing.T, f fixture, repo account.Repository, prs []int, offsets []time.Duration) []string {
	t.Helper()
	var ids []string
	for i, off := range offsets {
		ids = append(ids, storetest.Review(t, f.db, repo, prs[i], 1, base.Add(off)).ID)
	}
	return ids
}

// listAll pages through a listing and returns the ids in order and the size
// of each page.
func listAll(t *testing.T, f fixture, q review.ListQuery) (ids []string, pages []int) {
	t.Helper()
	for range 100 {
		page, err := f.reviews.List(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, len(page.Reviews))
		for _, r := range page.Reviews {
			ids = append(ids, r.ID)
		}
		if page.Next == nil {
			return ids, pages
		}
		q.After = page.Next
	}
	t.Fatal("listing did not end")
	return nil, nil
}

func TestList(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		// Created out of time order, on two pull requests.
		prs := []int{1, 2, 1, 2, 1}
		offsets := []time.Duration{3 * time.Minute, time.Minute, 5 * time.Minute, 2 * time.Minute, 4 * time.Minute}
		ids := create(t, f, f.repo, prs, offsets)
		newestFirst := []string{ids[2], ids[4], ids[0], ids[3], ids[1]}
		// Another repository of the same account stays out of the listing.
		create(t, f, storetest.Repo(t, f.db, "acme", "acme", "gadgets"), []int{1}, []time.Duration{10 * time.Minute})

		got, pages := listAll(t, f, review.ListQuery{AccountID: f.repo.AccountID, Owner: "acme", Repo: "widgets", Limit: 2})
		if !slices.Equal(got, newestFirst) || !slices.Equal(pages, []int{2, 2, 1}) {
			t.Errorf("pages of 2: %v in pages %v, want %v in pages [2 2 1]", got, pages, newestFirst)
		}

		// Exactly limit left: no next page. One more: a next page.
		q := review.ListQuery{AccountID: f.repo.AccountID, Owner: "acme", Repo: "widgets", Limit: 5}
		page, err := f.reviews.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Reviews) != 5 || page.Next != nil {
			t.Errorf("limit 5 of 5: %d reviews, next %+v; want 5 and no next", len(page.Reviews), page.Next)
		}
		q.Limit = 4
		page, err = f.reviews.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Reviews) != 4 || page.Next == nil {
			t.Fatalf("limit 4 of 5: %d reviews, next %+v; want 4 and a next", len(page.Reviews), page.Next)
		}
		last := page.Reviews[3]
		if page.Next.ID != last.ID || page.Next.SynthesizedAt != store.Micros(last.SynthesizedAt) {
			t.Errorf("next %+v, want the last review's position (%s)", page.Next, last.ID)
		}
		q.After = page.Next
		page, err = f.reviews.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Reviews) != 1 || page.Reviews[0].ID != ids[1] || page.Next != nil {
			t.Errorf("after the first 4: %+v, want only %s and no next", page, ids[1])
		}

		// By pull request, owner and name in any case.
		got, _ = listAll(t, f, review.ListQuery{AccountID: f.repo.AccountID, Owner: "ACME", Repo: "Widgets", PR: 1, Limit: 1})
		if want := []string{ids[2], ids[4], ids[0]}; !slices.Equal(got, want) {
			t.Errorf("PR 1: %v, want %v", got, want)
		}
		got, _ = listAll(t, f, review.ListQuery{AccountID: f.repo.AccountID, Owner: "Acme", Repo: "WIDGETS", PR: 2, Limit: 10})
		if want := []string{ids[3], ids[1]}; !slices.Equal(got, want) {
			t.Errorf("PR 2: %v, want %v", got, want)
		}
		page, err = f.reviews.List(ctx, review.ListQuery{AccountID: f.repo.AccountID, Owner: "acme", Repo: "widgets", PR: 3, Limit: 10})
		if err != nil || len(page.Reviews) != 0 || page.Reviews == nil || page.Next != nil {
			t.Errorf("PR without reviews: %+v, %v; want an empty, non-nil list", page, err)
		}

		// The list item carries the review's fields.
		page, err = f.reviews.List(ctx, review.ListQuery{AccountID: f.repo.AccountID, Owner: "acme", Repo: "widgets", Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		full, err := f.reviews.Get(ctx, f.repo.AccountID, ids[2])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(page.Reviews[0], full.Review) {
			t.Errorf("list item\n%+v\ndiffers from the review\n%+v", page.Reviews[0], full.Review)
		}

		for _, limit := range []int{0, -1} {
			if _, err := f.reviews.List(ctx, review.ListQuery{AccountID: f.repo.AccountID, Owner: "acme", Repo: "widgets", Limit: limit}); err == nil {
				t.Errorf("limit %d: no error", limit)
			}
		}
	})
}

func TestListTies(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, f fixture) {
		// Seven reviews synthesized in the same microsecond, between two others.
		offsets := []time.Duration{0}
		prs := []int{1}
		for range 7 {
			offsets = append(offsets, time.Minute)
			prs = append(prs, 1)
		}
		offsets = append(offsets, 2*time.Minute)
		prs = append(prs, 1)
		ids := create(t, f, f.repo, prs, offsets)
		tied := slices.Clone(ids[1:8])
		slices.Sort(tied)
		slices.Reverse(tied)
		want := append(append([]string{ids[8]}, tied...), ids[0])

		for _, limit := range []int{1, 2, 3, 4, 9, 10} {
			got, _ := listAll(t, f, review.ListQuery{AccountID: f.repo.AccountID, Owner: "acme", Repo: "widgets", Limit: limit})
			if !slices.Equal(got, want) {
				t.Errorf("limit %d: %v, want %v (ties by id, descending)", limit, got, want)
			}
			got, _ = listAll(t, f, review.ListQuery{AccountID: f.repo.AccountID, Owner: "acme", Repo: "widgets", PR: 1, Limit: limit})
			if !slices.Equal(got, want) {
				t.Errorf("PR 1, limit %d: %v, want %v", limit, got, want)
			}
		}
	})
}

func TestTenancy(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, f fixture) {
		ctx := context.Background()
		mine := storetest.Review(t, f.db, f.repo, 7, 2, base)
		// globex has a repository of the same name, with a review of its own.
		theirRepo := storetest.Repo(t, f.db, "globex", "acme", "widgets")
		theirs := storetest.Review(t, f.db, theirRepo, 7, 1, base.Add(time.Minute))
		stranger, err := account.Ensure(ctx, f.db.Writer(), account.PlatformGitHub, "initech", "")
		if err != nil {
			t.Fatal(err)
		}

		for _, c := range []struct {
			who, account string
		}{{"globex", theirRepo.AccountID}, {"initech", stranger.ID}, {"no account", ""}} {
			if _, err := f.reviews.Get(ctx, c.account, mine.ID); !errors.Is(err, review.ErrNotFound) {
				t.Errorf("%s gets acme's review: %v, want ErrNotFound", c.who, err)
			}
			if _, err := f.reviews.GetFinding(ctx, c.account, mine.Findings[0].ID); !errors.Is(err, review.ErrNotFound) {
				t.Errorf("%s gets acme's finding: %v, want ErrNotFound", c.who, err)
			}
		}
		page, err := f.reviews.List(ctx, review.ListQuery{AccountID: theirRepo.AccountID, Owner: "acme", Repo: "widgets", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Reviews) != 1 || page.Reviews[0].ID != theirs.ID {
			t.Errorf("globex lists %+v, want only its own review %s", page.Reviews, theirs.ID)
		}
		if _, err := f.reviews.List(ctx, review.ListQuery{AccountID: stranger.ID, Owner: "acme", Repo: "widgets", Limit: 10}); !errors.Is(err, review.ErrNotFound) {
			t.Errorf("initech lists acme/widgets: %v, want ErrNotFound", err)
		}

		// Missing ones look the same.
		if _, err := f.reviews.Get(ctx, f.repo.AccountID, id.New(id.Review, base)); !errors.Is(err, review.ErrNotFound) {
			t.Errorf("missing review: %v, want ErrNotFound", err)
		}
		if _, err := f.reviews.GetFinding(ctx, f.repo.AccountID, id.New(id.Finding, base)); !errors.Is(err, review.ErrNotFound) {
			t.Errorf("missing finding: %v, want ErrNotFound", err)
		}
		if _, err := f.reviews.List(ctx, review.ListQuery{AccountID: f.repo.AccountID, Owner: "acme", Repo: "nothing", Limit: 10}); !errors.Is(err, review.ErrNotFound) {
			t.Errorf("missing repository: %v, want ErrNotFound", err)
		}

		// The owner still sees its own.
		if _, err := f.reviews.Get(ctx, f.repo.AccountID, mine.ID); err != nil {
			t.Errorf("acme gets its review: %v", err)
		}
		if _, err := f.reviews.GetFinding(ctx, f.repo.AccountID, mine.Findings[1].ID); err != nil {
			t.Errorf("acme gets its finding: %v", err)
		}
		if _, err := f.reviews.GetFinding(ctx, theirRepo.AccountID, theirs.Findings[0].ID); err != nil {
			t.Errorf("globex gets its finding: %v", err)
		}
	})
}
