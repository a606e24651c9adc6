// Package githubtest is a GitHub double for tests: an httptest server that
// checks every request quorum sends against GitHub's official REST
// description (a subset of npm @octokit/openapi, extracted by
// scripts/github-openapi/extract.mjs), answers from that description's own
// examples, records what was posted, and serves real git repositories over
// smart HTTP. Knobs make it answer as GitHub does when things go wrong: a
// 422 for some review comments, secondary rate limits, a diff too large, a
// head that moved.
package githubtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/golang-jwt/jwt/v4"

	"github.com/quorum-review/quorum/internal/change"
)

//go:embed testdata/api.github.com.json
var description []byte

// apiPrefix is where the double serves the REST API, as GitHub Enterprise
// Server does; git is served from the root.
const apiPrefix = "/api/v3"

type spec struct {
	doc    *openapi3.T
	router routers.Router
}

// loadSpec loads the description once per test binary. It is not passed to
// doc.Validate: GitHub's description does not pass kin-openapi's own checks.
var loadSpec = sync.OnceValues(func() (*spec, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(description)
	if err != nil {
		return nil, fmt.Errorf("load GitHub's REST description: %w", err)
	}
	doc.Servers = openapi3.Servers{{URL: "/"}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route GitHub's REST description: %w", err)
	}
	return &spec{doc: doc, router: router}, nil
})

// AppID is the id of the app the double knows, and AppSlug its name in
// URLs: its comments are by AppSlug + "[bot]".
const (
	AppID   = 4242
	AppSlug = "quorum-test"
)

// Server is the GitHub double.
type Server struct {
	*httptest.Server
	t   testing.TB
	key *rsa.PrivateKey

	mu            sync.Mutex
	tokens        map[string]int64 // installation token → installation
	repos         map[string]*repo // "owner/repo"
	nextID        int64
	requests      []Request
	gitAuth       []string
	secondary     int
	retryAfter    time.Duration
	primaryReset  time.Time
	reject        func(ReviewComment) bool
	filesPageSize int
}

// Request is one API request the double received.
type Request struct {
	Method    string
	Path      string
	Accept    string
	UserAgent string
	Body      []byte
}

type repo struct {
	owner, name string
	dir         string
	pulls       map[int]*Pull
	permissions map[string]string
	reviews     map[int][]Review
	comments    map[int][]ReviewComment
	issue       map[int][]IssueComment
	checkRuns   []*CheckRun
	pending     map[int64]int // pending review → pull request
	// installations may see the repository; empty means every one.
	installations map[int64]bool
}

// Pull is a pull request of a repository the double serves.
type Pull struct {
	Number int
	Head   string // head commit
	Base   string // base commit
	// TooLarge makes GitHub's answers those of a very large pull request:
	// no patches in the file listing, 406 for the diff.
	TooLarge bool
	Draft    bool
}

// ReviewComment is an inline or file-level comment on a pull request.
type ReviewComment struct {
	ID          int64  `json:"id,omitempty"`
	Path        string `json:"path"`
	Line        int    `json:"line,omitempty"`
	StartLine   int    `json:"start_line,omitempty"`
	Side        string `json:"side,omitempty"`
	StartSide   string `json:"start_side,omitempty"`
	SubjectType string `json:"subject_type,omitempty"`
	CommitID    string `json:"commit_id,omitempty"`
	Body        string `json:"body"`
	// User wrote it; empty is the app.
	User string `json:"-"`
}

// Review is a review posted on a pull request.
type Review struct {
	ID       int64           `json:"id"`
	CommitID string          `json:"commit_id"`
	Event    string          `json:"event"`
	Body     string          `json:"body"`
	Comments []ReviewComment `json:"comments"`
}

// IssueComment is a comment posted on a pull request's conversation.
type IssueComment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
}

// CheckRun is a check run created (and updated) on a repository.
type CheckRun struct {
	ID          int64
	Name        string
	HeadSHA     string
	Status      string
	Conclusion  string
	Title       string
	Summary     string
	Annotations []map[string]any
	// Requests is how many requests created or updated it, and MaxBatch the
	// most annotations one of them carried.
	Requests int
	MaxBatch int
}

// New starts a double; it is closed when the test ends. Any request that
// GitHub's description does not allow fails the test.
func New(t testing.TB) *Server {
	t.Helper()
	if _, err := loadSpec(); err != nil {
		t.Fatal(err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, key: key, tokens: map[string]int64{}, repos: map[string]*repo{}, nextID: 1000, filesPageSize: 30}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// APIURL is the REST API's base URL, for github.Config.APIURL.
func (s *Server) APIURL() string { return s.URL + apiPrefix + "/" }

// PrivateKeyPEM is the app's private key, for github.Config.PrivateKeyPEM.
func (s *Server) PrivateKeyPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(s.key)})
}

// AddRepo serves the git repository in dir (a work tree or a bare
// repository) as owner/name.
func (s *Server) AddRepo(owner, name, dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[owner+"/"+name] = &repo{owner: owner, name: name, dir: dir, pulls: map[int]*Pull{},
		permissions: map[string]string{}, reviews: map[int][]Review{}, comments: map[int][]ReviewComment{}, issue: map[int][]IssueComment{}, pending: map[int64]int{}}
}

// Grant makes owner/name visible to the installations given only (by
// default a repository is every installation's): to the others the API
// answers 404, as GitHub does for a repository an installation lacks.
func (s *Server) Grant(owner, name string, installations ...int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(owner, name)
	if r.installations == nil {
		r.installations = map[int64]bool{}
	}
	for _, id := range installations {
		r.installations[id] = true
	}
}

// AddPull opens (or replaces) pull request p of owner/name.
func (s *Server) AddPull(owner, name string, p Pull) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repo(owner, name)
	cp := p
	r.pulls[p.Number] = &cp
}

// SetHead moves the head of a pull request, as a push does.
func (s *Server) SetHead(owner, name string, number int, head string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo(owner, name).pulls[number].Head = head
}

// SetPermission gives login a permission ("admin", "write", "read", …).
func (s *Server) SetPermission(owner, name, login, permission string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo(owner, name).permissions[login] = permission
}

// RejectComments makes review creation answer 422, as GitHub does for a
// comment it cannot place, while any comment matches reject.
func (s *Server) RejectComments(reject func(ReviewComment) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reject = reject
}

// SecondaryRateLimit answers the next n API requests with a secondary rate
// limit (403 with Retry-After).
func (s *Server) SecondaryRateLimit(n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secondary, s.retryAfter = n, retryAfter
}

// PrimaryRateLimit answers API requests with an exhausted rate limit
// (403, x-ratelimit-remaining: 0) until reset; the zero time ends it.
func (s *Server) PrimaryRateLimit(reset time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.primaryReset = reset
}

// FilesPageSize sets how many files a page of a pull request's files holds
// at most (GitHub's default is 30).
func (s *Server) FilesPageSize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.filesPageSize = n
}

// AddComment adds a review comment to a pull request, as someone else
// than the app when c.User is set.
func (s *Server) AddComment(owner, name string, number int, c ReviewComment) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.ID = s.id()
	r := s.repo(owner, name)
	r.comments[number] = append(r.comments[number], c)
}

// LeavePending leaves a pending review of the app on a pull request, as a
// client that stopped between creating and deleting one would.
func (s *Server) LeavePending(owner, name string, number int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo(owner, name).pending[s.id()] = number
}

// Pending returns how many pending reviews are left on the repository.
func (s *Server) Pending(owner, name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.repo(owner, name).pending)
}

// Reviews returns the reviews posted on a pull request.
func (s *Server) Reviews(owner, name string, number int) []Review {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.repo(owner, name).reviews[number])
}

// Comments returns every review comment of a pull request, inline (posted
// with reviews) and file-level.
func (s *Server) Comments(owner, name string, number int) []ReviewComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.repo(owner, name).comments[number])
}

// IssueComments returns the comments posted on a pull request's
// conversation.
func (s *Server) IssueComments(owner, name string, number int) []IssueComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.repo(owner, name).issue[number])
}

// CheckRuns returns the check runs of a repository.
func (s *Server) CheckRuns(owner, name string) []CheckRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CheckRun
	for _, c := range s.repo(owner, name).checkRuns {
		out = append(out, *c)
	}
	return out
}

// Requests returns the API requests received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// GitAuthorizations returns the Authorization headers of the git requests
// received.
func (s *Server) GitAuthorizations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.gitAuth)
}

// Tokens returns the installation tokens issued.
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for t := range s.tokens {
		out = append(out, t)
	}
	return out
}

func (s *Server) repo(owner, name string) *repo {
	r := s.repos[owner+"/"+name]
	if r == nil {
		s.t.Fatalf("githubtest: no repository %s/%s (AddRepo it)", owner, name)
	}
	return r
}

func (s *Server) id() int64 {
	s.nextID++
	return s.nextID
}

// serve routes git to git http-backend and the API to the description.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, apiPrefix+"/") {
		s.serveGit(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	sp, _ := loadSpec()
	// Route and validate a copy with GitHub's own path (no /api/v3).
	req := r.Clone(context.Background())
	req.URL.Path = strings.TrimPrefix(r.URL.Path, apiPrefix)
	req.URL.RawPath = ""
	req.Body = io.NopCloser(bytes.NewReader(body))
	route, params, err := sp.router.FindRoute(req)
	if err != nil {
		s.t.Errorf("githubtest: %s %s is not in GitHub's REST description: %v", r.Method, req.URL.Path, err)
		s.problem(w, http.StatusNotFound, "Not Found")
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		s.t.Errorf("githubtest: %s %s does not conform to GitHub's REST description: %v", r.Method, req.URL.Path, err)
		s.problem(w, http.StatusUnprocessableEntity, "Validation Failed")
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: req.URL.Path, Accept: r.Header.Get("Accept"), UserAgent: r.Header.Get("User-Agent"), Body: body})
	s.mu.Unlock()

	rec := httptest.NewRecorder()
	s.handle(rec, req, route, params, body)
	res := rec.Result()
	out := rec.Body.Bytes()
	if res.StatusCode < 300 && strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		rin := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: res.StatusCode, Header: res.Header,
			Options: &openapi3filter.Options{IncludeResponseStatus: true}}
		rin.SetBodyBytes(out)
		if err := openapi3filter.ValidateResponse(context.Background(), rin); err != nil {
			s.t.Errorf("githubtest: the double's answer to %s %s does not conform: %v", r.Method, req.URL.Path, err)
		}
	}
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(res.StatusCode)
	_, _ = w.Write(out)
}

// installationRepos lists the repositories the token's installation may
// see, a page at a time (per_page, page and a Link to the next page).
func (s *Server) installationRepos(w http.ResponseWriter, r *http.Request, route *routers.Route) {
	inst := s.tokens[bearer(r)]
	keys := slices.Sorted(maps.Keys(s.repos))
	v := example(route, 200)
	sample := v["repositories"].([]any)[0].(map[string]any)
	var all []any
	for _, k := range keys {
		rp := s.repos[k]
		if len(rp.installations) > 0 && !rp.installations[inst] {
			continue
		}
		b, _ := json.Marshal(sample)
		var one map[string]any
		_ = json.Unmarshal(b, &one)
		one["name"], one["full_name"] = rp.name, rp.owner+"/"+rp.name
		one["owner"].(map[string]any)["login"] = rp.owner
		all = append(all, one)
	}
	perPage, page := 30, 1
	if n, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && n > 0 {
		perPage = n
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && n > 0 {
		page = n
	}
	from, to := min(len(all), (page-1)*perPage), min(len(all), page*perPage)
	if to < len(all) {
		w.Header().Set("Link", fmt.Sprintf("<%s%s/installation/repositories?per_page=%d&page=%d>; rel=\"next\"", s.URL, apiPrefix, perPage, page+1))
	}
	v["total_count"], v["repositories"] = len(all), append([]any{}, all[from:to]...)
	writeJSON(w, 200, v)
}

func (s *Server) problem(w http.ResponseWriter, status int, message string, errs ...any) {
	body := map[string]any{"message": message, "documentation_url": "https://docs.github.com/rest", "status": strconv.Itoa(status)}
	if len(errs) > 0 {
		body["errors"] = errs
	}
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// example returns a deep copy of the first example of the operation's
// response with status: GitHub's own sample of what it answers.
func example(route *routers.Route, status int) map[string]any {
	return exampleOf(route.Operation, status).(map[string]any)
}

func exampleOf(op *openapi3.Operation, status int) any {
	resp := op.Responses.Status(status)
	if resp == nil || resp.Value == nil {
		panic(fmt.Sprintf("githubtest: no %d response", status))
	}
	mt := resp.Value.Content.Get("application/json")
	var v any
	if mt.Example != nil {
		v = mt.Example
	} else {
		names := make([]string, 0, len(mt.Examples))
		for n := range mt.Examples {
			names = append(names, n)
		}
		slices.Sort(names)
		v = mt.Examples[names[0]].Value.Value
	}
	data, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

// handle answers one validated API request.
func (s *Server) handle(w http.ResponseWriter, r *http.Request, route *routers.Route, p map[string]string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.HasPrefix(route.Path, "/app") {
		if err := s.checkJWT(r); err != nil {
			s.problem(w, http.StatusUnauthorized, "A JSON web token could not be decoded: "+err.Error())
			return
		}
		if route.Path == "/app" {
			v := example(route, 200)
			v["id"], v["slug"] = AppID, AppSlug
			writeJSON(w, 200, v)
			return
		}
		inst, _ := strconv.ParseInt(p["installation_id"], 10, 64)
		if route.Operation.OperationID == "apps/get-installation" {
			v := example(route, 200)
			v["id"] = inst
			writeJSON(w, 200, v)
			return
		}
		tok := "ghs_" + strings.ReplaceAll(base64.RawURLEncoding.EncodeToString(randomBytes(27)), "-", "x")
		s.tokens[tok] = inst
		v := example(route, 201)
		v["token"] = tok
		v["expires_at"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		writeJSON(w, 201, v)
		return
	}
	if _, ok := s.tokens[bearer(r)]; !ok {
		s.problem(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	if s.secondary > 0 {
		s.secondary--
		w.Header().Set("Retry-After", strconv.Itoa(int(s.retryAfter.Seconds())))
		s.problem(w, http.StatusForbidden, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.")
		return
	}
	if !s.primaryReset.IsZero() {
		w.Header().Set("X-Ratelimit-Remaining", "0")
		w.Header().Set("X-Ratelimit-Limit", "5000")
		w.Header().Set("X-Ratelimit-Reset", strconv.FormatInt(s.primaryReset.Unix(), 10))
		s.problem(w, http.StatusForbidden, "API rate limit exceeded for installation.")
		return
	}
	if route.Path == "/installation/repositories" {
		s.installationRepos(w, r, route)
		return
	}
	rp := s.repos[p["owner"]+"/"+p["repo"]]
	if rp == nil || len(rp.installations) > 0 && !rp.installations[s.tokens[bearer(r)]] {
		s.problem(w, http.StatusNotFound, "Not Found")
		return
	}
	if route.Operation.OperationID == "repos/compare-commits-with-basehead" {
		base, head, _ := strings.Cut(p["basehead"], "...")
		cmd := exec.Command("git", "merge-base", base, head)
		cmd.Dir = rp.dir
		out, err := cmd.Output()
		if err != nil {
			s.problem(w, http.StatusNotFound, "Not Found")
			return
		}
		v := example(route, 200)
		v["merge_base_commit"].(map[string]any)["sha"] = strings.TrimSpace(string(out))
		v["commits"], v["files"] = []any{}, []any{}
		writeJSON(w, 200, v)
		return
	}
	number, _ := strconv.Atoi(p["pull_number"])
	if n, err := strconv.Atoi(p["issue_number"]); err == nil {
		number = n
	}
	switch route.Operation.OperationID {
	case "repos/get-collaborator-permission-level":
		perm, ok := rp.permissions[p["username"]]
		if !ok {
			perm = "none"
		}
		v := example(route, 200)
		v["permission"] = perm
		v["role_name"] = perm
		u := v["user"].(map[string]any)
		u["login"], u["role_name"] = p["username"], perm
		writeJSON(w, 200, v)
		return
	case "checks/create":
		var in struct {
			Name       string          `json:"name"`
			HeadSHA    string          `json:"head_sha"`
			Status     string          `json:"status"`
			Conclusion string          `json:"conclusion"`
			Output     *checkRunOutput `json:"output"`
		}
		_ = json.Unmarshal(body, &in)
		c := &CheckRun{ID: s.id(), Name: in.Name, HeadSHA: in.HeadSHA, Status: in.Status, Conclusion: in.Conclusion}
		c.apply(in.Output)
		rp.checkRuns = append(rp.checkRuns, c)
		writeJSON(w, 201, c.json(example(route, 201)))
		return
	case "checks/update":
		id, _ := strconv.ParseInt(p["check_run_id"], 10, 64)
		var c *CheckRun
		for _, cr := range rp.checkRuns {
			if cr.ID == id {
				c = cr
			}
		}
		if c == nil {
			s.problem(w, http.StatusNotFound, "Not Found")
			return
		}
		var in struct {
			Status     string          `json:"status"`
			Conclusion string          `json:"conclusion"`
			Output     *checkRunOutput `json:"output"`
		}
		_ = json.Unmarshal(body, &in)
		if in.Status != "" {
			c.Status = in.Status
		}
		if in.Conclusion != "" {
			c.Conclusion, c.Status = in.Conclusion, "completed"
		}
		c.apply(in.Output)
		writeJSON(w, 200, c.json(example(route, 200)))
		return
	}
	pr := rp.pulls[number]
	if pr == nil {
		s.problem(w, http.StatusNotFound, "Not Found")
		return
	}
	switch route.Operation.OperationID {
	case "pulls/get":
		if strings.Contains(r.Header.Get("Accept"), "diff") {
			if pr.TooLarge {
				s.problem(w, http.StatusNotAcceptable, "Sorry, the diff exceeded the maximum number of lines (20000)",
					map[string]any{"resource": "PullRequest", "field": "diff", "code": "too_large"})
				return
			}
			out, err := s.diff(rp, pr)
			if err != nil {
				s.problem(w, http.StatusInternalServerError, err.Error())
				return
			}
			w.Header().Set("Content-Type", "application/vnd.github.diff; charset=utf-8")
			_, _ = w.Write(out)
			return
		}
		writeJSON(w, 200, s.pullJSON(route, rp, pr))
	case "pulls/delete-pending-review":
		id, _ := strconv.ParseInt(p["review_id"], 10, 64)
		if rp.pending[id] != number {
			s.problem(w, http.StatusNotFound, "Not Found")
			return
		}
		delete(rp.pending, id)
		v := exampleOf(route.Operation, 200).(map[string]any)
		v["id"], v["state"] = id, "PENDING"
		writeJSON(w, 200, v)
	case "pulls/list-files":
		s.listFiles(w, r, rp, pr)
	case "pulls/list-reviews":
		out := []any{}
		add := func(id int64, state, body, commit string) {
			v := exampleOf(route.Operation, 200).([]any)[0].(map[string]any)
			v["id"], v["state"], v["body"], v["commit_id"] = id, state, body, commit
			u := v["user"].(map[string]any)
			u["login"], u["type"] = AppSlug+"[bot]", "Bot"
			out = append(out, v)
		}
		for _, rv := range rp.reviews[number] {
			add(rv.ID, map[string]string{"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}[rv.Event], rv.Body, rv.CommitID)
		}
		for id, n := range rp.pending {
			if n == number {
				add(id, "PENDING", "", pr.Head)
			}
		}
		writeJSON(w, 200, out)
	case "pulls/create-review":
		s.createReview(w, route, rp, pr, body)
	case "pulls/list-review-comments":
		out := []any{}
		for _, c := range rp.comments[number] {
			out = append(out, commentJSON(exampleOf(route.Operation, 200).([]any)[0].(map[string]any), c))
		}
		writeJSON(w, 200, out)
	case "pulls/create-review-comment":
		var c ReviewComment
		_ = json.Unmarshal(body, &c)
		if c.SubjectType != "file" && !s.onDiff(rp, pr, c) {
			s.problem(w, http.StatusUnprocessableEntity, "Validation Failed",
				map[string]any{"resource": "PullRequestReviewComment", "code": "custom", "field": "pull_request_review_thread.line", "message": "could not be resolved"})
			return
		}
		c.ID = s.id()
		rp.comments[number] = append(rp.comments[number], c)
		writeJSON(w, 201, commentJSON(example(route, 201), c))
	case "issues/create-comment":
		var in struct {
			Body string `json:"body"`
		}
		_ = json.Unmarshal(body, &in)
		c := IssueComment{ID: s.id(), Body: in.Body}
		rp.issue[number] = append(rp.issue[number], c)
		v := example(route, 201)
		v["id"], v["body"] = c.ID, c.Body
		writeJSON(w, 201, v)
	case "issues/list-comments":
		out := []any{}
		for _, c := range rp.issue[number] {
			v := exampleOf(route.Operation, 200).([]any)[0].(map[string]any)
			v["id"], v["body"] = c.ID, c.Body
			out = append(out, v)
		}
		writeJSON(w, 200, out)
	default:
		s.t.Errorf("githubtest: %s is described but not served", route.Operation.OperationID)
		s.problem(w, http.StatusNotImplemented, "not served by the double")
	}
}

type checkRunOutput struct {
	Title       string           `json:"title"`
	Summary     string           `json:"summary"`
	Annotations []map[string]any `json:"annotations"`
}

func (c *CheckRun) apply(o *checkRunOutput) {
	c.Requests++
	if o == nil {
		return
	}
	if o.Title != "" {
		c.Title = o.Title
	}
	if o.Summary != "" {
		c.Summary = o.Summary
	}
	c.Annotations = append(c.Annotations, o.Annotations...)
	c.MaxBatch = max(c.MaxBatch, len(o.Annotations))
}

func (c *CheckRun) json(v map[string]any) map[string]any {
	v["id"], v["name"], v["head_sha"], v["status"] = c.ID, c.Name, c.HeadSHA, c.Status
	if c.Conclusion != "" {
		v["conclusion"] = c.Conclusion
	} else {
		v["conclusion"] = nil
		v["completed_at"] = nil
	}
	return v
}

func commentJSON(v map[string]any, c ReviewComment) map[string]any {
	v["id"], v["path"], v["body"] = c.ID, c.Path, c.Body
	u := v["user"].(map[string]any)
	if c.User == "" {
		u["login"], u["type"] = AppSlug+"[bot]", "Bot"
	} else {
		u["login"], u["type"] = c.User, "User"
	}
	if c.CommitID != "" {
		v["commit_id"] = c.CommitID
	}
	if c.Line > 0 {
		v["line"] = c.Line
	}
	if c.StartLine > 0 {
		v["start_line"] = c.StartLine
	} else {
		v["start_line"] = nil
	}
	if c.SubjectType != "" {
		v["subject_type"] = c.SubjectType
	}
	return v
}

func (s *Server) pullJSON(route *routers.Route, rp *repo, pr *Pull) map[string]any {
	v := example(route, 200)
	v["number"] = pr.Number
	v["draft"] = pr.Draft
	// GitHub's example lists a team without the "type" its schema requires.
	v["requested_teams"] = []any{}
	v["state"] = "open"
	clone := s.URL + "/" + rp.owner + "/" + rp.name + ".git"
	for _, side := range []string{"head", "base"} {
		b := v[side].(map[string]any)
		if side == "head" {
			b["sha"] = pr.Head
		} else {
			b["sha"] = pr.Base
		}
		repo := b["repo"].(map[string]any)
		repo["name"] = rp.name
		repo["full_name"] = rp.owner + "/" + rp.name
		repo["clone_url"] = clone
		repo["owner"].(map[string]any)["login"] = rp.owner
	}
	return v
}

// diff is git's diff of the pull request, as GitHub's diff media type
// answers it.
func (s *Server) diff(rp *repo, pr *Pull) ([]byte, error) {
	cmd := exec.Command("git", "diff", "--no-color", "--full-index", "-M", "--unified=3", pr.Base, pr.Head)
	cmd.Dir = rp.dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git diff %s %s: %w", pr.Base, pr.Head, err)
	}
	return out, nil
}

// onDiff reports whether a comment's lines are inside the pull request's
// diff, on its head side: GitHub refuses others with a 422.
func (s *Server) onDiff(rp *repo, pr *Pull, c ReviewComment) bool {
	out, err := s.diff(rp, pr)
	if err != nil {
		return false
	}
	files, err := change.ParseDiff(bytes.NewReader(out))
	if err != nil {
		return false
	}
	for _, f := range files {
		if f.Path() != c.Path {
			continue
		}
		if c.Line == 0 {
			return c.SubjectType == "file"
		}
		h := f.HunkFor(c.Line)
		if h == nil {
			return false
		}
		return c.StartLine == 0 || f.HunkFor(c.StartLine) == h && c.StartLine < c.Line
	}
	return false
}

func (s *Server) listFiles(w http.ResponseWriter, r *http.Request, rp *repo, pr *Pull) {
	out, err := s.diff(rp, pr)
	if err != nil {
		s.problem(w, http.StatusInternalServerError, err.Error())
		return
	}
	var files []map[string]any
	for _, chunk := range splitDiff(string(out)) {
		files = append(files, fileJSON(chunk, pr.TooLarge))
	}
	per := s.filesPageSize
	if n, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && n > 0 && n < per {
		per = n
	}
	page := 1
	if n, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && n > 0 {
		page = n
	}
	lo, hi := min((page-1)*per, len(files)), min(page*per, len(files))
	if hi < len(files) {
		next := *r.URL
		q := next.Query()
		q.Set("page", strconv.Itoa(page+1))
		q.Set("per_page", strconv.Itoa(per))
		next.RawQuery = q.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s%s>; rel="next"`, s.URL, apiPrefix, next.RequestURI()))
	}
	writeJSON(w, 200, append([]map[string]any{}, files[lo:hi]...))
}

// splitDiff splits a git diff into its files' parts.
func splitDiff(d string) []string {
	var out []string
	for _, part := range strings.Split("\n"+d, "\ndiff --git ") {
		if strings.TrimSpace(part) != "" {
			out = append(out, "diff --git "+part+"\n")
		}
	}
	return out
}

// fileJSON is one entry of a pull request's files, from its diff part.
func fileJSON(part string, noPatch bool) map[string]any {
	files, _ := change.ParseDiff(strings.NewReader(part))
	f := files[0]
	status := map[change.Status]string{change.StatusAdded: "added", change.StatusDeleted: "removed",
		change.StatusModified: "modified", change.StatusRenamed: "renamed", change.StatusCopied: "copied"}[f.Status]
	adds, dels := 0, 0
	for _, h := range f.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case change.KindAdded:
				adds++
			case change.KindDeleted:
				dels++
			}
		}
	}
	v := map[string]any{
		"sha": strings.Repeat("0", 40), "filename": f.Path(), "status": status,
		"additions": adds, "deletions": dels, "changes": adds + dels,
		"blob_url":     "https://github.com/o/r/blob/x/" + f.Path(),
		"raw_url":      "https://github.com/o/r/raw/x/" + f.Path(),
		"contents_url": "https://api.github.com/repos/o/r/contents/" + f.Path(),
	}
	if f.Status == change.StatusRenamed {
		v["previous_filename"] = f.OldPath
	}
	if i := strings.Index(part, "\n@@ "); i >= 0 && !noPatch && !f.Binary {
		v["patch"] = strings.TrimSuffix(part[i+1:], "\n")
	}
	return v
}

func (s *Server) createReview(w http.ResponseWriter, route *routers.Route, rp *repo, pr *Pull, body []byte) {
	var in Review
	if err := json.Unmarshal(body, &in); err != nil {
		s.problem(w, http.StatusUnprocessableEntity, "Problems parsing JSON")
		return
	}
	for _, c := range in.Comments {
		if (s.reject != nil && s.reject(c)) || !s.onDiff(rp, pr, c) {
			// GitHub names no comment: the client has to find which.
			s.problem(w, http.StatusUnprocessableEntity, "Unprocessable Entity",
				"Pull request review thread line must be part of the diff")
			return
		}
	}
	if (in.Event == "REQUEST_CHANGES" || in.Event == "COMMENT") && in.Body == "" {
		s.problem(w, http.StatusUnprocessableEntity, "Unprocessable Entity", "Body is required")
		return
	}
	for _, n := range rp.pending {
		if n == pr.Number {
			s.problem(w, http.StatusUnprocessableEntity, "Unprocessable Entity",
				"User can only have one pending review per pull request")
			return
		}
	}
	in.ID = s.id()
	if in.Event == "" {
		// A pending review: seen by its author only, until submitted or
		// deleted.
		rp.pending[in.ID] = pr.Number
		v := example(route, 200)
		v["id"], v["body"], v["commit_id"], v["state"] = in.ID, in.Body, in.CommitID, "PENDING"
		writeJSON(w, 200, v)
		return
	}
	for i := range in.Comments {
		in.Comments[i].ID = s.id()
		in.Comments[i].CommitID = in.CommitID
		rp.comments[pr.Number] = append(rp.comments[pr.Number], in.Comments[i])
	}
	rp.reviews[pr.Number] = append(rp.reviews[pr.Number], in)
	v := example(route, 200)
	v["id"], v["body"], v["commit_id"] = in.ID, in.Body, in.CommitID
	v["state"] = map[string]string{"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}[in.Event]
	writeJSON(w, 200, v)
}

func (s *Server) checkJWT(r *http.Request) error {
	tok, err := jwt.Parse(bearer(r), func(t *jwt.Token) (any, error) {
		if _, ok := t.Method.(*jwt.SigningMethodRSA); !ok {
			return nil, errors.New("not RS256")
		}
		return &s.key.PublicKey, nil
	})
	if err != nil {
		return err
	}
	claims, _ := tok.Claims.(jwt.MapClaims)
	if iss := fmt.Sprint(claims["iss"]); iss != strconv.Itoa(AppID) {
		return fmt.Errorf("issuer %s is not app %d", iss, AppID)
	}
	return nil
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	for _, p := range []string{"Bearer ", "bearer ", "token "} {
		if strings.HasPrefix(h, p) {
			return strings.TrimPrefix(h, p)
		}
	}
	return ""
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// serveGit serves /{owner}/{repo}.git/… with git http-backend, to clients
// that authenticate as GitHub asks: basic, user x-access-token, an
// installation token as the password.
func (s *Server) serveGit(w http.ResponseWriter, r *http.Request) {
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
	if len(parts) < 3 || !strings.HasSuffix(parts[1], ".git") {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.gitAuth = append(s.gitAuth, r.Header.Get("Authorization"))
	rp := s.repos[parts[0]+"/"+strings.TrimSuffix(parts[1], ".git")]
	user, pass, ok := r.BasicAuth()
	_, known := s.tokens[pass]
	s.mu.Unlock()
	if rp == nil {
		http.NotFound(w, r)
		return
	}
	if !ok || user != "x-access-token" || !known {
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "Invalid username or token.", http.StatusUnauthorized)
		return
	}
	root := rp.dir
	if fi, err := os.Stat(filepath.Join(root, ".git")); err == nil && fi.IsDir() {
		root = filepath.Join(root, ".git")
	}
	h := &cgi.Handler{
		Path: gitPath(s.t),
		Args: []string{"http-backend"},
		Root: "/" + parts[0] + "/" + parts[1],
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_COUNT=2",
			"GIT_CONFIG_KEY_0=uploadpack.allowAnySHA1InWant", "GIT_CONFIG_VALUE_0=true",
			"GIT_CONFIG_KEY_1=safe.directory", "GIT_CONFIG_VALUE_1=*",
		},
		InheritEnv: []string{"PATH", "HOME"},
	}
	h.ServeHTTP(w, r)
}

var gitPathOnce = sync.OnceValues(func() (string, error) { return exec.LookPath("git") })

func gitPath(t testing.TB) string {
	p, err := gitPathOnce()
	if err != nil {
		t.Fatalf("githubtest: git: %v", err)
	}
	return p
}
