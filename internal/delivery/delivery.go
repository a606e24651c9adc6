// Package delivery holds what the platforms' webhook intakes share: reading
// a delivery's body before its signature can be checked, without letting
// unauthenticated senders hold the memory or the connections (a bounded
// budget of bytes held at once, a minimum rate after a grace), answering
// the sender, and recognising a review command in a comment.
package delivery

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/semaphore"

	"github.com/quorum-review/quorum/internal/api"
)

// MaxBody is the largest webhook body accepted: GitHub caps payloads at
// 25 MB, and Gitea's are far smaller.
const MaxBody = 25 << 20

// BodyBudget bounds the bytes of webhook bodies held at once, counted as
// they arrive: bodies are read before their signature can be checked, so
// without a bound unauthenticated requests could fill the memory.
const BodyBudget = 64 << 20

// MinBodyRate is the slowest a body may come, in bytes a second, on
// average from the end of its headers, once BodyGrace has passed: a
// platform sends a delivery at once, and a sender slower than this would
// only hold a connection (and, with the server's read timeout, a share of
// the budget) to starve the others.
const MinBodyRate = 32 << 10

// BodyGrace is how long a body may take before MinBodyRate applies.
const BodyGrace = 5 * time.Second

// BodyTimeout is the longest a body may take at any rate (serve's read
// timeout).
const BodyTimeout = 30 * time.Second

// Limits are a Reader's budget and rate; zero fields take the constants
// of those names (tests make them smaller).
type Limits struct {
	BodyBudget  int64
	MinBodyRate int64
	BodyGrace   time.Duration
}

// Reader reads the bodies of one webhook endpoint's deliveries within one
// budget: copies of an intake share it through the pointer.
type Reader struct {
	limits Limits
	bodies *semaphore.Weighted
	log    *slog.Logger
}

// NewReader returns a Reader with limits, logging refusals to log.
func NewReader(limits Limits, log *slog.Logger) *Reader {
	limits.BodyBudget = cmp.Or(limits.BodyBudget, BodyBudget)
	limits.MinBodyRate = cmp.Or(limits.MinBodyRate, MinBodyRate)
	limits.BodyGrace = cmp.Or(limits.BodyGrace, BodyGrace)
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Reader{limits: limits, bodies: semaphore.NewWeighted(limits.BodyBudget), log: log}
}

// Read takes a delivery's body for the endpoint at path: it refuses any
// method but POST and bodies over MaxBody, reads the body within the
// budget and the minimum rate, and on any refusal answers w itself (a
// problem linking to docsURL) and returns ok false. Otherwise the caller
// owns the body until it calls release, which it must call either way.
// delivery is the delivery's id, for the log only.
func (rd *Reader) Read(w http.ResponseWriter, r *http.Request, path, docsURL, delivery string) (body []byte, release func(), ok bool) {
	release = func() {}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		api.WriteProblem(w, r, docsURL, http.StatusMethodNotAllowed, "", fmt.Sprintf("%s is not allowed on %s; allowed: POST.", r.Method, path))
		return nil, release, false
	}
	if r.ContentLength > MaxBody {
		api.WriteProblem(w, r, docsURL, http.StatusRequestEntityTooLarge, "", "Webhook bodies are limited to 25 MiB.")
		return nil, release, false
	}
	body, held, status := rd.read(w, r)
	release = func() { rd.bodies.Release(held) }
	switch status {
	case 0:
		return body, release, true
	case http.StatusServiceUnavailable:
		rd.log.Warn("webhook refused: too many bodies being read", "path", path, "delivery", delivery)
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Connection", "close")
		api.WriteProblem(w, r, docsURL, status, "", "Too many webhook bodies are being read at once; retry in a second.")
	case http.StatusRequestEntityTooLarge:
		api.WriteProblem(w, r, docsURL, status, "", "Webhook bodies are limited to 25 MiB.")
	case http.StatusRequestTimeout:
		rd.log.Warn("webhook: body too slow", "path", path, "delivery", delivery, "remote", r.RemoteAddr)
		w.Header().Set("Connection", "close")
		// A 400 (the problem types have no 408): the request was not
		// completed as required.
		api.WriteProblem(w, r, docsURL, http.StatusBadRequest, "", fmt.Sprintf("The body came slower than %d bytes a second; the connection is closed.", rd.limits.MinBodyRate))
	default:
		api.WriteProblem(w, r, docsURL, http.StatusBadRequest, "", "The body could not be read.")
	}
	return nil, release, false
}

// read reads the request's body, taking its share of the budget as the
// bytes arrive, and setting the connection's read deadline so that, after
// the grace, the body must keep to the minimum rate. It returns the body,
// the share held (for the caller to release), and 0 or the status that
// refuses the request.
func (rd *Reader) read(w http.ResponseWriter, r *http.Request) (body []byte, held int64, status int) {
	rc := http.NewResponseController(w)
	start := time.Now()
	// The deadline by which the next byte must come when n have: the
	// grace plus the time n bytes take at the minimum rate.
	// It never goes past BodyTimeout, as the server's read timeout would
	// not have (setting a deadline replaces the server's).
	deadline := func(n int64) time.Time {
		return start.Add(min(BodyTimeout, rd.limits.BodyGrace+time.Duration(n*int64(time.Second)/rd.limits.MinBodyRate)))
	}
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	var buf bytes.Buffer
	chunk := make([]byte, 32<<10)
	for {
		// Not every ResponseWriter can (a test's recorder); the server's
		// read timeout still bounds those.
		_ = rc.SetReadDeadline(deadline(int64(buf.Len())))
		n, err := r.Body.Read(chunk)
		if n > 0 {
			if int64(buf.Len()+n) > MaxBody {
				return nil, held, http.StatusRequestEntityTooLarge
			}
			if !rd.bodies.TryAcquire(int64(n)) {
				return nil, held, http.StatusServiceUnavailable
			}
			held += int64(n)
			buf.Write(chunk[:n])
		}
		switch {
		case errors.Is(err, io.EOF):
			return buf.Bytes(), held, 0
		case errors.Is(err, os.ErrDeadlineExceeded):
			return nil, held, http.StatusRequestTimeout
		case err != nil:
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				return nil, held, http.StatusRequestEntityTooLarge
			}
			rd.log.Debug("webhook: body not read", "error", err.Error())
			return nil, held, http.StatusBadRequest
		}
	}
}

// WriteStatus answers a delivery with a small JSON body the platform
// shows in its delivery log.
func WriteStatus(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, "{\"status\":%q}\n", status)
}

// MentionMatcher reports whether a comment asks bot for a review:
// "@quorum review" (or "@quorum[bot] review"), any case, anywhere in the
// comment but not inside a longer word or name.
func MentionMatcher(bot string) func(string) bool {
	re := regexp.MustCompile(`(?i)(?:^|[^\w@/-])@` + regexp.QuoteMeta(bot) + `(?:\[bot\])?[ \t]+review\b`)
	return re.MatchString
}

// Retention is how long a handled delivery's id is kept to recognise a
// redelivery. GitHub redelivers deliveries of the past 3 days at most,
// and Gitea's delivery log is cleaned up after days too. A delivery never
// handled within it was given up (its job's attempts last about a day),
// and goes with its payload.
const Retention = 7 * 24 * time.Hour

// Decode decodes a signed delivery's body into v, a JSON object, once its
// Content-Type says JSON and it is valid UTF-8; otherwise it answers w (a
// problem linking to docsURL) and returns false.
func Decode(w http.ResponseWriter, r *http.Request, docsURL string, body []byte, v any) bool {
	if mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); strings.TrimSpace(mt) != "application/json" {
		api.WriteProblem(w, r, docsURL, http.StatusUnsupportedMediaType, "", "Set the webhook's content type to application/json.")
		return false
	}
	if !utf8.Valid(body) {
		// JSON is UTF-8 (RFC 8259), as the platforms send it; what is not
		// would be stored as text, which PostgreSQL refuses.
		api.WriteProblem(w, r, docsURL, http.StatusBadRequest, "", "The body is not valid UTF-8.")
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		api.WriteProblem(w, r, docsURL, http.StatusBadRequest, "", "The body is not a JSON object.")
		return false
	}
	return true
}
