// Package id makes quorum's public identifiers: a type prefix and a ULID
// (48-bit millisecond time, 80 random bits, Crockford base32), so ids sort by
// creation time and reveal no row numbers.
package id

import (
	"crypto/rand"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// Prefixes of each kind of id.
const (
	Review       = "rev_"
	Finding      = "fnd_"
	Delivery     = "wh_"
	Endpoint     = "hook_"
	Event        = "evt_"
	Token        = "tok_"
	Account      = "acct_"
	Installation = "inst_"
	Repository   = "repo_"
)

// recentMillis is how many milliseconds New remembers its newest id of.
const recentMillis = 64

var (
	mu sync.Mutex
	// newest is the newest id made for each of the recentMillis
	// milliseconds asked for last, the least recently asked first in
	// millis. ulid.Monotonic
	// remembers only the last millisecond, so ids made for one
	// millisecond while another goroutine made one for another (a review
	// saved while a test or a job makes ids at other times) did not sort
	// in the order they were made: a review's finding.created could list
	// before its review.completed.
	newest = map[uint64]ulid.ULID{}
	millis []uint64
)

// New returns a new id with the given prefix, made at t. Ids made for one
// millisecond sort in the order they were made, in one process.
func New(prefix string, t time.Time) string {
	ms := ulid.Timestamp(t)
	mu.Lock()
	defer mu.Unlock()
	u, ok := newest[ms]
	if !ok || !increment(&u) {
		u = ulid.MustNew(ms, rand.Reader)
	}
	// The milliseconds used last are kept.
	if i := slices.Index(millis, ms); i >= 0 {
		millis = slices.Delete(millis, i, i+1)
	}
	millis = append(millis, ms)
	if len(millis) > recentMillis {
		delete(newest, millis[0])
		millis = millis[1:]
	}
	newest[ms] = u
	return prefix + u.String()
}

// increment adds one to u's random part; false when it would overflow.
func increment(u *ulid.ULID) bool {
	for i := len(u) - 1; i >= 6; i-- {
		u[i]++
		if u[i] != 0 {
			return true
		}
	}
	return false
}

// Valid reports whether s is a well-formed id with the given prefix.
// Lower case is refused although ULID parsing accepts it: ids are stored as
// New writes them, in upper case, so a lower-case one could never be found.
func Valid(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix)
	if !ok || len(rest) != ulid.EncodedSize || strings.ToUpper(rest) != rest {
		return false
	}
	_, err := ulid.ParseStrict(rest)
	return err == nil
}
