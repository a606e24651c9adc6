package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
)

// scrape fetches url (a /metrics) and parses it with Prometheus' own
// text parser.
func scrape(t *testing.T, url, token string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// value returns the value of the family's series with exactly these
// labels (a counter's, a gauge's, or a histogram's count), and whether
// there is one.
func value(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.Label {
			if v, ok := labels[l.GetName()]; !ok || v != l.GetValue() {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// Real work — a review job, a webhook delivery, GitHub App deliveries and
// API requests — moves the counters a scrape of /metrics shows.
func TestMetricsCountRealWork(t *testing.T) {
	t.Parallel()
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{"go.mod": "module example.com/app\n\ngo 1.22\n", "app.go": "package app\n\nfunc Hello() string { return \"hi\" }\n"})
	base := r.Commit("base")
	r.Write(map[string]string{"app.go": "package app\n\nimport \"fmt\"\n\nfunc Hello() string { return \"hi\" }\n\nfunc Greet(name string) string {\n\treturn fmt.Sprintf(\"hello %d\", name)\n}\n"})
	head := r.Commit("head")

	received := make(chan struct{}, 8)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case received <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(receiver.Close)

	_, keyPEM := appKey(t)
	dir := storetest.SQLiteDir(t)
	url := serve(t, env("QUORUM_GITHUB_PRIVATE_KEY", string(keyPEM), "QUORUM_GITHUB_WEBHOOK_SECRET", testWebhookSecret, "QUORUM_WEBHOOK_ALLOW_PRIVATE", "true"),
		"--data-dir", dir, "--github-app-id", "12345", "--webhook-timeout", "5s")
	ctx := context.Background()
	db, err := store.Open(ctx, store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ConfigureJobs(store.JobsConfig{}); err != nil { // insert-only, as an api process
		t.Fatal(err)
	}
	repo := storetest.Repo(t, db, "acme", "acme", "app")

	// GitHub App deliveries: a ping, and one with a bad signature.
	if status, body := postWebhook(t, url, testWebhookSecret, "ping", "d-ping", webhookExample(t, "ping.json")); status != http.StatusOK {
		t.Fatalf("ping: %d %s", status, body)
	}
	if status, _ := postWebhook(t, url, "wrong", "installation", "d-bad", webhookExample(t, "installation.created.json")); status != http.StatusUnauthorized {
		t.Fatalf("badly signed delivery: %d, want 401", status)
	}
	// A webhook delivery to a customer's endpoint.
	addEndpointAndEvent(t, db, repo.AccountID, receiver.URL, "whsec_c2VydmUtdGVzdC1zZWNyZXQtc2VydmUtdGVzdA==")
	// A review job.
	err = db.InTx(ctx, func(tx store.Tx) error {
		return pipeline.Enqueue(ctx, tx, pipeline.ReviewArgs{AccountID: repo.AccountID, RepositoryID: repo.ID,
			Owner: "acme", Repo: "app", PR: 3, Base: base, Head: head, Source: "local", Location: r.Dir}, time.Now())
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-received:
	case <-time.After(60 * time.Second):
		t.Fatal("no webhook delivery within 60 s")
	}
	waitJobCompleted(t, db, pipeline.ReviewArgs{}.Kind())
	tok, _, err := quorum(t, env(), "token", "create", "--data-dir", dir, "--account", "acme", "--scope", "reviews:read")
	if err != nil {
		t.Fatal(err)
	}
	if status, body := get(t, url+"/v1/reviews?owner=acme&repo=app&pr=3", strings.TrimSpace(tok)); status != http.StatusOK || len(body["reviews"].([]any)) != 1 {
		t.Fatalf("list: %d %v", status, body)
	}

	// The attempt is recorded just after the receiver answered: poll.
	var fams map[string]*dto.MetricFamily
	deadline := time.Now().Add(30 * time.Second)
	for {
		fams = scrape(t, url+"/metrics", "")
		if v, _ := value(fams, "quorum_webhook_attempts_total", map[string]string{"status": "succeeded"}); v >= 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling the worker's bookkeeping
	}
	for _, want := range []struct {
		name   string
		labels map[string]string
		atLeast,
		atMost float64
	}{
		{"quorum_http_requests_total", map[string]string{"route": "/v1/reviews", "method": "GET", "code": "200"}, 1, 1},
		{"quorum_http_request_duration_seconds", map[string]string{"route": "/v1/reviews", "method": "GET"}, 1, 1},
		{"quorum_http_requests_total", map[string]string{"route": "/github/webhook", "method": "POST", "code": "401"}, 1, 1},
		{"quorum_github_intake_deliveries_total", map[string]string{"event": "ping", "code": "200"}, 1, 1},
		{"quorum_github_intake_deliveries_total", map[string]string{"event": "installation", "code": "401"}, 1, 1},
		{"quorum_reviews_total", map[string]string{"outcome": "completed", "reason": ""}, 1, 1},
		{"quorum_review_duration_seconds", nil, 1, 1},
		{"quorum_specialist_duration_seconds", map[string]string{"specialist": "logic", "outcome": "ok"}, 1, 1},
		{"quorum_findings_total", map[string]string{"specialist": "logic", "severity": "medium"}, 1, 10},
		{"quorum_review_files_total", map[string]string{"language": "Go", "analysed": "true"}, 1, 1},
		{"quorum_webhook_attempts_total", map[string]string{"status": "succeeded"}, 1, 10}, // review.failed, then the review's events
		{"quorum_webhook_attempt_duration_seconds", nil, 1, 10},
		{"quorum_jobs", map[string]string{"kind": "review.run", "state": "completed"}, 1, 1},
		{"quorum_job_attempts_total", map[string]string{"kind": "review.run", "outcome": "completed"}, 1, 1},
		{"quorum_webhook_dead_letters_total", nil, 0, 0},
		{"go_goroutines", nil, 1, 1e6},
		{"process_resident_memory_bytes", nil, 1, 1e12},
	} {
		v, ok := value(fams, want.name, want.labels)
		if !ok || v < want.atLeast || v > want.atMost {
			t.Errorf("%s%v = %v (present %v), want %v to %v", want.name, want.labels, v, ok, want.atLeast, want.atMost)
		}
	}
}

// With --metrics-addr the metrics leave the API's listener; with a token
// a scrape must bring it.
func TestMetricsOwnAddressAndToken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	url := serve(t, env("QUORUM_METRICS_TOKEN", "s3cret"), "--data-dir", t.TempDir(), "--metrics-addr", addr)
	if status, _ := get(t, url+"/metrics", ""); status != http.StatusNotFound {
		t.Errorf("GET /metrics on the API's listener: %d, want 404", status)
	}
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("scrape without the token: %d, want 401", res.StatusCode)
	}
	fams := scrape(t, "http://"+addr+"/metrics", "s3cret")
	if _, ok := value(fams, "go_goroutines", nil); !ok {
		t.Errorf("no go_goroutines in %d families", len(fams))
	}
}
