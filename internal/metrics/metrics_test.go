package metrics

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// GitHub's API calls are counted by status, and the rate limit's remaining
// requests kept; a request that got no answer is "error".
func TestGitHubTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/forbidden" {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.Header().Set("X-RateLimit-Remaining", "4999")
	}))
	defer srv.Close()
	m := New()
	c := &http.Client{Transport: m.GitHubTransport(http.DefaultTransport)}
	for _, p := range []string{"/a", "/forbidden", "/b"} {
		res, err := c.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	if _, err := c.Get("http://127.0.0.1:1/unreachable"); err == nil {
		t.Fatal("a request to a closed port succeeded")
	}
	for code, want := range map[string]float64{"200": 2, "403": 1, "error": 1} {
		if got := testutil.ToFloat64(m.githubCalls.WithLabelValues(code)); got != want {
			t.Errorf("calls with %s = %v, want %v", code, got, want)
		}
	}
	if got := testutil.ToFloat64(m.githubRemains); got != 0 {
		t.Errorf("rate limit remaining %v, want 0 (the lowest in the window, though a later answer had 4999)", got)
	}
}

// An event outside the known ones is counted as "other": a label never
// takes a value a sender chose.
func TestIntakeLabelsAreBounded(t *testing.T) {
	m := New()
	h := m.Intake(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	for _, ev := range []string{"pull_request", "x-" + strings.Repeat("a", 100), "Pull_Request"} {
		req := httptest.NewRequest(http.MethodPost, "/github/webhook", nil)
		req.Header.Set("X-GitHub-Event", ev)
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	if got := testutil.ToFloat64(m.intake.WithLabelValues("pull_request", "202")); got != 2 {
		t.Errorf("pull_request deliveries %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.intake.WithLabelValues("other", "202")); got != 1 {
		t.Errorf("other deliveries %v, want 1", got)
	}
	// Two counted, three made at 0 for the alerts (401 of the main events).
	if n := testutil.CollectAndCount(m.intake); n != 5 {
		t.Errorf("%d series, want 5", n)
	}
}

// A nil *Metrics records nothing and passes handlers through.
func TestNilMetrics(t *testing.T) {
	var m *Metrics
	m.Review(true, "", 0, nil, nil, nil)
	m.WebhookAttempt("succeeded", 0, false)
	served := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { served++; w.WriteHeader(http.StatusTeapot) })
	for _, wrapped := range []http.Handler{m.Instrument(h), m.Intake(h)} {
		rec := httptest.NewRecorder()
		wrapped.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		if rec.Code != http.StatusTeapot {
			t.Errorf("answer %d through a nil Metrics, want the handler's 418", rec.Code)
		}
	}
	if served != 2 || m.GitHubTransport(http.DefaultTransport) != http.DefaultTransport {
		t.Errorf("a nil Metrics changed what it wraps (handler served %d times)", served)
	}
}

// The job hook counts attempts by kind and outcome, and a job the rescuer
// brought back when it runs again; unknown kinds are "other".
func TestJobHook(t *testing.T) {
	m := New()
	h := m.JobHook([]string{"review.run"}).(*jobHook)
	ctx := context.Background()
	rescued := &rivertype.JobRow{ID: 7, Kind: "review.run", Errors: []rivertype.AttemptError{{Error: "boom", Attempt: 1}, {Error: rescuedError, Attempt: 2}}}
	plain := &rivertype.JobRow{Kind: "review.run", Errors: []rivertype.AttemptError{{Error: rescuedError}, {Error: "boom"}}}
	// The rescued job runs twice (it snoozed in between): one rescue.
	for _, j := range []*rivertype.JobRow{rescued, plain, rescued} {
		if err := h.WorkBegin(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	boom := errors.New("boom")
	for _, err := range []error{nil, boom, river.JobCancel(boom), river.JobSnooze(time.Second)} {
		if got := h.WorkEnd(ctx, rescued, err); got != err {
			t.Errorf("WorkEnd changed the error %v to %v", err, got)
		}
	}
	_ = h.WorkEnd(ctx, &rivertype.JobRow{Kind: "made.up"}, nil)
	if got := testutil.ToFloat64(m.jobsRescued.WithLabelValues("review.run")); got != 1 {
		t.Errorf("rescued %v, want 1", got)
	}
	for _, o := range []string{"completed", "failed", "cancelled", "snoozed"} {
		if got := testutil.ToFloat64(m.jobAttempts.WithLabelValues("review.run", o)); got != 1 {
			t.Errorf("%s attempts %v, want 1", o, got)
		}
	}
	if got := testutil.ToFloat64(m.jobAttempts.WithLabelValues("other", "completed")); got != 1 {
		t.Errorf("other kind's attempts %v, want 1", got)
	}
}

// The rate-limit gauge keeps the lowest answer of its 5-minute window, and
// a new window starts from the next answer.
func TestLowestRemainingWindow(t *testing.T) {
	m := New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, step := range []struct {
		n    float64
		at   time.Duration
		want float64
	}{{4000, 0, 4000}, {10, time.Minute, 10}, {3000, 2 * time.Minute, 10}, {3000, 7 * time.Minute, 3000}, {2999, 8 * time.Minute, 2999}} {
		m.lowestRemaining(step.n, t0.Add(step.at))
		if got := testutil.ToFloat64(m.githubRemains); got != step.want {
			t.Errorf("after %v at +%v: %v, want %v", step.n, step.at, got, step.want)
		}
	}
}
