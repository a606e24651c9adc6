package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/review"
)

// Limits of GET /v1/reviews's limit parameter.
const (
	defaultLimit = 20
	maxLimit     = 100
)

// listParams are GET /v1/reviews's query parameters, validated.
type listParams struct {
	Owner, Repo string
	PR          int
	Limit       int
	Cursor      string
}

// parseListParams validates the query, reporting every bad parameter at once.
func parseListParams(rawQuery string) (listParams, *Error) {
	qr := newQueryReader(rawQuery)
	p := listParams{}
	p.Owner = qr.required("owner", "the repository owner")
	p.Repo = qr.required("repo", "the repository name")
	if v, ok := qr.single("pr"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			qr.reject("pr", "must be a pull request number, a whole number of at least 1")
		} else {
			p.PR = n
		}
	}
	p.Limit, p.Cursor = qr.page()
	if e := qr.err(); e != nil {
		return listParams{}, e
	}
	return p, nil
}

// queryReader reads query parameters, collecting every bad one.
type queryReader struct {
	q   url.Values
	bad []InvalidParam
}

// newQueryReader decodes a raw query string. Unlike url.ParseQuery, which
// drops what it cannot decode, it rejects each parameter whose name or value
// is not percent-decodable (or is joined by a semicolon), or decodes to text
// that is not valid UTF-8 or holds a NUL: a filter or cursor that is
// silently dropped answers a different question than the one asked.
func newQueryReader(rawQuery string) *queryReader {
	qr := &queryReader{q: url.Values{}}
	rejected := map[string]bool{}
	for pair := range strings.SplitSeq(rawQuery, "&") {
		if pair == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		name, nameErr := url.QueryUnescape(rawName)
		if nameErr != nil || !validText(name) {
			name = rawName
		}
		value, valueErr := url.QueryUnescape(rawValue)
		var reason string
		switch {
		case strings.Contains(pair, ";"):
			name, _, _ = strings.Cut(name, ";")
			reason = "a semicolon is not a parameter separator: use &"
		case nameErr != nil || valueErr != nil:
			reason = "not valid percent-encoding"
		case !validText(name) || !validText(value):
			reason = "must be UTF-8 text without NUL characters"
		default:
			qr.q[name] = append(qr.q[name], value)
			continue
		}
		if !rejected[name] {
			rejected[name] = true
			qr.reject(name, reason)
		}
	}
	// A rejected parameter counts as given, but is not read again.
	for name := range rejected {
		delete(qr.q, name)
		qr.q[name] = nil
	}
	return qr
}

// validText reports text PostgreSQL's text type stores as given: valid
// UTF-8 without NUL.
func validText(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

func (qr *queryReader) reject(name, reason string) {
	qr.bad = append(qr.bad, InvalidParam{Name: name, Reason: reason})
}

// single returns a parameter given once; given twice is rejected.
func (qr *queryReader) single(name string) (string, bool) {
	vs, ok := qr.q[name]
	if !ok || vs == nil {
		return "", false // absent, or rejected already
	}
	if len(vs) > 1 {
		qr.reject(name, "given more than once")
		return "", false
	}
	return vs[0], true
}

// required returns a parameter that must be given, once, and not empty.
func (qr *queryReader) required(name, what string) string {
	_, given := qr.q[name]
	v, ok := qr.single(name)
	if !given || ok && v == "" {
		qr.reject(name, "required: "+what)
	}
	return v
}

// page reads a listing's limit (default 20, 1 to 100) and cursor.
func (qr *queryReader) page() (limit int, cursor string) {
	limit = defaultLimit
	if v, ok := qr.single("limit"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			qr.reject("limit", fmt.Sprintf("must be a whole number from 1 to %d", maxLimit))
		} else {
			limit = n
		}
	}
	if v, ok := qr.single("cursor"); ok {
		if v == "" {
			qr.reject("cursor", "must be the next_cursor of a previous page")
		}
		cursor = v
	}
	return limit, cursor
}

// err is the 400 for the rejected parameters, or nil.
func (qr *queryReader) err() *Error {
	if len(qr.bad) == 0 {
		return nil
	}
	return &Error{Code: codeInvalid, Detail: "The query has invalid parameters; see invalid_params.", Params: qr.bad}
}

type reviewList struct {
	Reviews    []review.Review `json:"reviews"`
	NextCursor *string         `json:"next_cursor"`
}

func (s *Server) listReviews() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, _ := PrincipalFrom(r.Context())
		p, perr := parseListParams(r.URL.RawQuery)
		if perr != nil {
			s.writeError(w, r, perr)
			return
		}
		scope := listScope(pr.AccountID, p.Owner, p.Repo, p.PR)
		q := review.ListQuery{AccountID: pr.AccountID, Owner: p.Owner, Repo: p.Repo, PR: p.PR, Limit: p.Limit}
		if p.Cursor != "" {
			cur, err := s.cursors.open(p.Cursor, scope)
			if err != nil {
				s.writeError(w, r, &Error{Code: codeInvalid, Detail: "The cursor is invalid; see invalid_params.",
					Params: []InvalidParam{{Name: "cursor", Reason: "not a next_cursor returned for this owner, repo and pr"}}})
				return
			}
			q.After = &cur
		}
		page, err := s.reviews.List(r.Context(), q)
		if errors.Is(err, review.ErrNotFound) {
			s.writeError(w, r, errorf(codeNotFound, "No repository %s/%s.", p.Owner, p.Repo))
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out := reviewList{Reviews: page.Reviews}
		if page.Next != nil {
			c := s.cursors.seal(*page.Next, scope)
			out.NextCursor = &c
		}
		writeJSON(w, out)
	})
}

func (s *Server) getReview() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, _ := PrincipalFrom(r.Context())
		rid := r.PathValue("id")
		if !id.Valid(id.Review, rid) {
			s.writeError(w, r, errorf(codeNotFound, "No review %s.", rid))
			return
		}
		// A stored review never changes, so its encoding is cached, keyed
		// by the asking account too: another account misses and gets the
		// database's 404.
		key := pr.AccountID + "\x00" + rid
		body, ok := s.reviewCache.Get(key)
		if !ok {
			full, err := s.reviews.Get(r.Context(), pr.AccountID, rid)
			if errors.Is(err, review.ErrNotFound) {
				s.writeError(w, r, errorf(codeNotFound, "No review %s.", rid))
				return
			}
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			body = encodeJSON(full)
			s.reviewCache.Add(key, body)
		}
		writeBody(w, body)
	})
}

func (s *Server) getFinding() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pr, _ := PrincipalFrom(r.Context())
		fid := r.PathValue("id")
		if !id.Valid(id.Finding, fid) {
			s.writeError(w, r, errorf(codeNotFound, "No finding %s.", fid))
			return
		}
		d, err := s.reviews.GetFinding(r.Context(), pr.AccountID, fid)
		if errors.Is(err, review.ErrNotFound) {
			s.writeError(w, r, errorf(codeNotFound, "No finding %s.", fid))
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, d)
	})
}
