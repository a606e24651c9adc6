package id_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/id"
)

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

func TestNewShape(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{id.Review, id.Finding, id.Delivery, id.Endpoint, id.Event, id.Token, id.Account, id.Installation, id.Repository} {
		s := id.New(prefix, time.Now())
		rest, ok := strings.CutPrefix(s, prefix)
		if !ok {
			t.Fatalf("New(%q) = %q: missing prefix", prefix, s)
		}
		if len(rest) != 26 {
			t.Errorf("New(%q) = %q: %d characters after the prefix, want 26", prefix, s, len(rest))
		}
		for _, c := range rest {
			if !strings.ContainsRune(crockford, c) {
				t.Errorf("New(%q) = %q: %q is not Crockford base32", prefix, s, c)
			}
		}
		if !id.Valid(prefix, s) {
			t.Errorf("Valid(%q, %q) = false for a new id", prefix, s)
		}
	}
}

// Not parallel: ulid's monotonic entropy increases within the millisecond
// of the last id made, so an id made meanwhile by another test (at
// time.Now()) starts base's millisecond afresh (a failure seen in CI).
func TestNewSortsByTime(t *testing.T) {
	base := time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)
	var ids []string
	// Later times first, so an id that ignored its time would not sort.
	for i := 100; i >= 0; i-- {
		ids = append(ids, id.New(id.Review, base.Add(time.Duration(i)*time.Millisecond)))
	}
	slices.Reverse(ids)
	if !slices.IsSorted(ids) {
		t.Errorf("ids made at increasing times do not sort: %v", ids)
	}

	// Within one millisecond the ids still increase, in the order made.
	same := make([]string, 50)
	for i := range same {
		same[i] = id.New(id.Review, base)
	}
	if !slices.IsSorted(same) || len(slices.Compact(slices.Clone(same))) != len(same) {
		t.Errorf("ids made in one millisecond are not strictly increasing: %v", same)
	}
}

func TestValidRejects(t *testing.T) {
	t.Parallel()
	good := id.New(id.Review, time.Now())
	rest := strings.TrimPrefix(good, id.Review)
	for name, s := range map[string]string{
		"empty":             "",
		"prefix only":       id.Review,
		"wrong prefix":      id.Finding + rest,
		"no prefix":         rest,
		"short":             good[:len(good)-1],
		"long":              good + "0",
		"letter U":          id.Review + "U" + rest[1:],
		"letter I":          id.Review + rest[:25] + "I",
		"punctuation":       id.Review + rest[:10] + "-" + rest[11:],
		"overflowing time":  id.Review + "8" + rest[1:],
		"multibyte":         id.Review + "é" + rest[2:],
		"prefix twice":      id.Review + id.Review + rest[4:],
		"space after":       good[:len(good)-1] + " ",
		"other kind prefix": "tok_" + rest,
		"lower case":        id.Review + strings.ToLower(rest),
	} {
		if id.Valid(id.Review, s) {
			t.Errorf("%s: Valid(%q, %q) = true", name, id.Review, s)
		}
	}
	if !id.Valid(id.Review, good) {
		t.Errorf("Valid(%q) = false", good)
	}
}

// TestNewSortsInOrderMadeWhenInterleaved: ids made for one millisecond
// sort in the order they were made even when ids for other milliseconds
// are made between them (another goroutine's), as a review's events are
// while other reviews are saved.
func TestNewSortsInOrderMadeWhenInterleaved(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	for i := range 200 {
		first := id.New(id.Event, at)
		id.New(id.Event, at.Add(time.Duration(i+1)*time.Millisecond))
		second := id.New(id.Event, at)
		if second <= first {
			t.Fatalf("round %d: %s made after %s sorts before it", i, second, first)
		}
	}
}
