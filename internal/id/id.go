// Package id makes quorum's public identifiers: a type prefix and a ULID
// (48-bit millisecond time, 80 random bits, Crockford base32), so ids sort by
// creation time and reveal no row numbers.
package id

import (
	"crypto/rand"
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

var (
	mu      sync.Mutex
	entropy = ulid.Monotonic(rand.Reader, 0)
)

// New returns a new id with the given prefix, made at t.
func New(prefix string, t time.Time) string {
	mu.Lock()
	u := ulid.MustNew(ulid.Timestamp(t), entropy)
	mu.Unlock()
	return prefix + u.String()
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
