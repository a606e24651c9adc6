package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"

	apidoc "github.com/quorum-review/quorum/api"
	"github.com/quorum-review/quorum/internal/review"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/internal/token"
)

// excused are documented responses the conformance test cannot provoke,
// with the reason.
var excused = map[string]string{
	"GET /v1/openapi.json 500": "the document is served from memory; nothing there can fail",
}

// TestOpenAPIConformance drives every operation through its success and
// error paths and validates each response against api/openapi.yaml; it
// fails if a documented response was never produced.
func TestOpenAPIConformance(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, be storetest.Backend) {
		cov := &coverage{}
		b := setup(t, be.Open)
		b.cover = cov
		base := b.clock.Now().Add(-time.Hour)
		storetest.Review(t, b.db, b.repo, 1, 0, base)
		storetest.Review(t, b.db, b.repo, 1, 0, base.Add(time.Minute))
		withFindings := storetest.Review(t, b.db, b.repo, 1, 2, base.Add(2*time.Minute))
		storetest.Review(t, b.db, b.repo, 2, 1, base.Add(3*time.Minute))
		foreign := storetest.Review(t, b.db, b.other, 1, 1, base)

		both := b.reader(t)
		_, reviewsOnly := b.token(t, b.repo.AccountID, 0, token.ScopeReviewsRead)
		_, findingsOnly := b.token(t, b.repo.AccountID, 0, token.ScopeFindingsRead)

		t.Run("list", func(t *testing.T) {
			var page reviewList
			b.get(t, listPath(b.repo, "pr=1&limit=2"), both).want(t, http.StatusOK).json(t, &page)
			if len(page.Reviews) != 2 || page.NextCursor == nil {
				t.Fatalf("first page of pr 1: %d reviews, next_cursor %v; want 2 and a cursor", len(page.Reviews), page.NextCursor)
			}
			b.get(t, listPath(b.repo, "pr=1&limit=2&cursor="+*page.NextCursor), both).want(t, http.StatusOK).json(t, &page)
			if len(page.Reviews) != 1 || page.NextCursor != nil {
				t.Fatalf("last page of pr 1: %d reviews, next_cursor %v; want 1 and null", len(page.Reviews), *page.NextCursor)
			}
			b.get(t, listPath(b.repo, ""), both).want(t, http.StatusOK).json(t, &page)
			if len(page.Reviews) != 4 || page.NextCursor != nil {
				t.Fatalf("all of acme/widgets: %d reviews, want 4 on one page", len(page.Reviews))
			}
			p := b.get(t, listPath(b.repo, "limit=abc"), both).want(t, http.StatusBadRequest).problem(t, codeInvalid)
			if paramNames(p) != "limit" {
				t.Errorf("invalid_params %v, want limit", p.InvalidParams)
			}
			b.get(t, listPath(b.repo, ""), "").want(t, http.StatusUnauthorized).problem(t, codeUnauthorized)
			b.get(t, listPath(b.repo, ""), findingsOnly).want(t, http.StatusForbidden).problem(t, codeForbidden)
			b.get(t, listPath(b.other, ""), both).want(t, http.StatusNotFound).problem(t, codeNotFound)
		})

		t.Run("review", func(t *testing.T) {
			var got review.Full
			b.get(t, "/v1/reviews/"+withFindings.ID, both).want(t, http.StatusOK).json(t, &got)
			if len(got.Findings) != 2 || got.Findings[0].SuggestedPatch == nil || got.Findings[1].SuggestedPatch != nil {
				t.Errorf("findings %+v: want two, the first with a patch and the second with null", got.Findings)
			}
			if !bytes.Contains(b.get(t, "/v1/reviews/"+withFindings.ID, both).body, []byte(`"suggested_patch":null`)) {
				t.Error("a finding without a patch must carry suggested_patch: null")
			}
			b.get(t, "/v1/reviews/"+withFindings.ID, "").want(t, http.StatusUnauthorized).problem(t, codeUnauthorized)
			b.get(t, "/v1/reviews/"+withFindings.ID, findingsOnly).want(t, http.StatusForbidden).problem(t, codeForbidden)
			b.get(t, "/v1/reviews/"+foreign.ID, both).want(t, http.StatusNotFound).problem(t, codeNotFound)
		})

		t.Run("finding", func(t *testing.T) {
			f := withFindings.Findings[0]
			var got review.Detail
			b.get(t, "/v1/findings/"+f.ID, both).want(t, http.StatusOK).json(t, &got)
			if got.ReviewID != withFindings.ID || got.Context.Excerpt.Path != f.Path || len(got.Context.Excerpt.Lines) == 0 ||
				got.Context.Provenance.HeadSHA != withFindings.HeadSHA || got.Context.Provenance.Rule != f.Rule {
				t.Errorf("finding detail %+v lacks its review id or context", got)
			}
			b.get(t, "/v1/findings/"+f.ID, "").want(t, http.StatusUnauthorized).problem(t, codeUnauthorized)
			b.get(t, "/v1/findings/"+f.ID, reviewsOnly).want(t, http.StatusForbidden).problem(t, codeForbidden)
			b.get(t, "/v1/findings/"+foreign.Findings[0].ID, both).want(t, http.StatusNotFound).problem(t, codeNotFound)
		})

		t.Run("rate limited", func(t *testing.T) {
			tight := *b
			tight.serve(t, func(c *Config) { c.RateLimit = 1 })
			for _, path := range []string{listPath(b.repo, ""), "/v1/reviews/" + withFindings.ID, "/v1/findings/" + withFindings.Findings[0].ID} {
				_, secret := tight.token(t, b.repo.AccountID, 0, token.ScopeReviewsRead, token.ScopeFindingsRead)
				tight.get(t, path, secret).want(t, http.StatusOK)
				tight.get(t, path, secret).want(t, http.StatusTooManyRequests).problem(t, codeRateLimited)
			}
			tight.get(t, "/v1/openapi.json", "").want(t, http.StatusOK)
			tight.get(t, "/v1/openapi.json", "").want(t, http.StatusTooManyRequests).problem(t, codeRateLimited)
		})

		t.Run("meta", func(t *testing.T) {
			b.get(t, "/v1/openapi.json", "").want(t, http.StatusOK)
			var health struct{ Status, Version string }
			b.get(t, "/healthz", "").want(t, http.StatusOK).json(t, &health)
			if health.Status != "ok" || health.Version != "test" {
				t.Errorf("/healthz = %+v, want status ok and the server's version", health)
			}
			b.get(t, "/readyz", "").want(t, http.StatusOK)
			b.get(t, "/docs/api/errors", "").want(t, http.StatusOK)
			b.get(t, "/v1/nope", "").want(t, http.StatusNotFound).problem(t, codeNotFound)
			r := b.do(t, http.MethodDelete, listPath(b.repo, "")).want(t, http.StatusMethodNotAllowed)
			r.problem(t, codeMethodNotAllowed)
			if allow := r.header.Get("Allow"); !strings.Contains(allow, http.MethodGet) {
				t.Errorf("Allow %q, want it to list GET", allow)
			}
		})

		t.Run("webhooks", func(t *testing.T) { driveWebhooks(t, b, be.Open) })

		t.Run("schema behind", func(t *testing.T) {
			behind := setup(t, be.Open)
			behind.cover = cov
			if _, err := behind.db.Writer().Exec(t.Context(), `DELETE FROM quorum_migrations`); err != nil {
				t.Fatal(err)
			}
			behind.get(t, "/readyz", "").want(t, http.StatusServiceUnavailable).problem(t, codeUnavailable)
		})

		t.Run("database closed", func(t *testing.T) {
			closed := setup(t, be.Open)
			closed.cover = cov
			secret := closed.reader(t)
			r := storetest.Review(t, closed.db, closed.repo, 1, 1, base)
			closed.db.Close()
			closed.get(t, "/readyz", "").want(t, http.StatusServiceUnavailable).problem(t, codeUnavailable)
			for _, path := range []string{listPath(closed.repo, ""), "/v1/reviews/" + r.ID, "/v1/findings/" + r.Findings[0].ID} {
				closed.get(t, path, secret).want(t, http.StatusInternalServerError).problem(t, codeInternal)
			}
		})

		s, err := loadSpec()
		if err != nil {
			t.Fatal(err)
		}
		if missing := cov.missing(s, excused); len(missing) > 0 {
			t.Errorf("documented responses no test validated (drive them here, or excuse them with a reason):\n%s", strings.Join(missing, "\n"))
		}
	})
}

// TestServedOpenAPIMatchesYAML checks /v1/openapi.json is api/openapi.yaml,
// so the two cannot drift.
func TestServedOpenAPIMatchesYAML(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.SQLite)
	served := b.get(t, "/v1/openapi.json", "").want(t, http.StatusOK)
	if ct := served.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var fromYAML any
	if err := yaml.Unmarshal(apidoc.OpenAPIYAML, &fromYAML); err != nil {
		t.Fatal(err)
	}
	// Through JSON, so both sides hold the same Go types.
	raw, err := json.Marshal(fromYAML)
	if err != nil {
		t.Fatalf("api/openapi.yaml has a value JSON cannot hold (quote integer keys such as status codes): %v", err)
	}
	var want, got any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(served.body, &got); err != nil {
		t.Fatalf("served document is not JSON: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("GET /v1/openapi.json differs from api/openapi.yaml")
	}
	// And as kin-openapi reads them, which a client generator would use.
	s, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := openapi3.NewLoader().LoadFromData(served.body)
	if err != nil {
		t.Fatalf("kin-openapi cannot load the served document: %v", err)
	}
	a, errA := json.Marshal(s.doc)
	z, errZ := json.Marshal(fromJSON)
	if errA != nil || errZ != nil || !bytes.Equal(a, z) {
		t.Errorf("kin-openapi reads the served document differently from api/openapi.yaml (%v, %v)", errA, errZ)
	}
	if m, _ := got.(map[string]any); m["openapi"] != "3.1.0" || m["paths"] == nil {
		t.Errorf("served document lacks openapi 3.1.0 or paths: %.200s", served.body)
	}
}

// TestErrorsPageHasEveryAnchor checks the problem type URLs lead somewhere:
// the page has an element for every anchor the document allows.
func TestErrorsPageHasEveryAnchor(t *testing.T) {
	t.Parallel()
	s, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	pattern := s.doc.Components.Schemas["Problem"].Value.Properties["type"].Value.Pattern
	m := regexp.MustCompile(`#\(([a-z|-]+)\)`).FindStringSubmatch(pattern)
	if m == nil {
		t.Fatalf("cannot read the anchors from Problem.type's pattern %q", pattern)
	}
	anchors := strings.Split(m[1], "|")
	if len(anchors) != len(problemTypes) {
		t.Errorf("the document allows %d anchors, the server has %d problem types", len(anchors), len(problemTypes))
	}

	b := setup(t, storetest.SQLite)
	page := b.get(t, "/docs/api/errors", "").want(t, http.StatusOK)
	if ct := page.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type %q, want text/html", ct)
	}
	for _, a := range anchors {
		if !bytes.Contains(page.body, []byte(`id="`+a+`"`)) {
			t.Errorf("errors page has no element with id=%q", a)
		}
	}
}
