package api

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/review"
)

// fuzzScope is the listing the fuzzed cursors are opened for.
var fuzzScope = listScope("acct_01J9Z6Q3W8K5T2M4N7P0R1S3VX", "acme", "widgets", 0)

// FuzzCursorOpen checks that open never panics and that whatever it
// accepts is exactly what seal makes of the position it decoded.
func FuzzCursorOpen(f *testing.F) {
	c := cursorCodec{key: bytes.Repeat([]byte{7}, 32)}
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	valid := c.seal(review.Cursor{SynthesizedAt: at.UnixMicro(), ID: id.New(id.Review, at)}, fuzzScope)
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(c.seal(review.Cursor{SynthesizedAt: -1, ID: "rev_"}, fuzzScope))
	f.Add(c.seal(review.Cursor{ID: id.New(id.Review, at)}, listScope("acct_x", "acme", "widgets", 1)))
	f.Add("")
	f.Add("AQ")
	f.Add("not a cursor!")
	f.Fuzz(func(t *testing.T, s string) {
		cur, err := c.open(s, fuzzScope)
		if err != nil {
			return
		}
		if again := c.seal(cur, fuzzScope); again != s {
			t.Fatalf("open accepted %q as %+v, which seals as %q", s, cur, again)
		}
		if !id.Valid(id.Review, cur.ID) {
			t.Fatalf("open accepted %q with review id %q", s, cur.ID)
		}
	})
}

// FuzzParseListParams checks that parseListParams never panics and that
// what it accepts is within range.
func FuzzParseListParams(f *testing.F) {
	for _, q := range []string{
		"owner=acme&repo=widgets",
		"owner=acme&repo=widgets&pr=42&limit=100&cursor=AQ",
		"owner=acme&repo=widgets&limit=0",
		"owner=acme&repo=widgets&limit=101",
		"owner=acme&repo=widgets&limit=9223372036854775808",
		"owner=acme&owner=evil&repo=widgets",
		"owner=&repo=",
		"pr=-1&limit=abc&cursor=",
		"owner=a%00&repo=%ff",
		"",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		p, perr := parseListParams(raw)
		if err != nil && perr == nil {
			t.Fatalf("%q: accepted a query that does not decode (%v)", raw, err)
		}
		if perr != nil {
			if perr.Code != codeInvalid || len(perr.Params) == 0 {
				t.Fatalf("%q: rejected without naming a parameter: %+v", raw, perr)
			}
			return
		}
		switch {
		case p.Limit < 1 || p.Limit > maxLimit:
			t.Fatalf("%q: accepted limit %d", raw, p.Limit)
		case p.PR < 0:
			t.Fatalf("%q: accepted pr %d", raw, p.PR)
		case p.Owner == "" || p.Repo == "":
			t.Fatalf("%q: accepted owner %q, repo %q", raw, p.Owner, p.Repo)
		case !validText(p.Owner) || !validText(p.Repo) || !validText(p.Cursor):
			t.Fatalf("%q: accepted text that is not UTF-8 without NUL", raw)
		case q.Has("cursor") && p.Cursor == "":
			t.Fatalf("%q: accepted an empty cursor", raw)
		}
		// A given number is used as given, never replaced.
		if n, err := strconv.Atoi(q.Get("limit")); q.Has("limit") && (err != nil || n != p.Limit) {
			t.Fatalf("%q: limit %q accepted as %d", raw, q.Get("limit"), p.Limit)
		}
		if n, err := strconv.Atoi(q.Get("pr")); q.Has("pr") && (err != nil || n != p.PR || n < 1) {
			t.Fatalf("%q: pr %q accepted as %d", raw, q.Get("pr"), p.PR)
		}
	})
}

// FuzzBodyChecks: JSON that encoding/json writes has no duplicate member
// and no lone surrogate escape, whatever the text; the same JSON with a
// member repeated is caught, however deep the values before it.
func FuzzBodyChecks(f *testing.F) {
	for _, s := range []string{"", "a", "\x00", "\xff", "\\ud800", `"},"a":{"`, "😀", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw, err := json.Marshal(map[string]any{"a": s, "b": []any{s, map[string]any{"a": s, "c": []any{}}}, s: s})
		if err != nil {
			t.Fatal(err)
		}
		if name, dup := duplicateKey(raw); dup {
			t.Fatalf("%s: duplicate %q reported", raw, name)
		}
		if loneSurrogate(raw) {
			t.Fatalf("%s: lone surrogate reported", raw)
		}
		again := append(append([]byte(`{"k":`), raw...), `,"k":1}`...)
		if name, dup := duplicateKey(again); !dup || name != "k" {
			t.Fatalf("%s: duplicate %q, %v; want k", again, name, dup)
		}
	})
}
