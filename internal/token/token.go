// Package token owns personal access tokens: their format, their storage
// (only a SHA-256 hash is kept) and authentication of API requests.
//
// A token is "qrm_" + 30 base62 characters of randomness (178 bits) + 6
// base62 characters of CRC-32 over them, the shape GitHub uses, so secret
// scanners can recognise a quorum token and reject a mistyped one offline.
package token

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"math/big"
	"slices"
	"strings"
)

// Prefix starts every token.
const Prefix = "qrm_"

const (
	randomLen   = 30
	checksumLen = 6
	// Len is the length of a whole token.
	Len = len(Prefix) + randomLen + checksumLen
)

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Scopes a token may hold.
const (
	ScopeReviewsRead   = "reviews:read"
	ScopeFindingsRead  = "findings:read"
	ScopeWebhooksRead  = "webhooks:read"
	ScopeWebhooksWrite = "webhooks:write"
)

// AllScopes lists every scope, in a stable order.
var AllScopes = []string{ScopeReviewsRead, ScopeFindingsRead, ScopeWebhooksRead, ScopeWebhooksWrite}

// ErrMalformed is a string that is not a well-formed quorum token.
var ErrMalformed = errors.New("malformed token")

// Generate returns a new random token.
func Generate() (string, error) {
	var b strings.Builder
	b.Grow(Len)
	b.WriteString(Prefix)
	max := big.NewInt(int64(len(base62)))
	random := make([]byte, randomLen)
	for i := range random {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", err
		}
		random[i] = base62[n.Int64()]
	}
	b.Write(random)
	b.WriteString(checksum(random))
	return b.String(), nil
}

// checksum encodes CRC-32 of the random part as 6 base62 digits.
func checksum(random []byte) string {
	n := crc32.ChecksumIEEE(random)
	out := make([]byte, checksumLen)
	for i := checksumLen - 1; i >= 0; i-- {
		out[i] = base62[n%62]
		n /= 62
	}
	return string(out)
}

// WellFormed reports whether s has a token's shape and a valid checksum.
func WellFormed(s string) bool {
	if len(s) != Len || !strings.HasPrefix(s, Prefix) {
		return false
	}
	body := s[len(Prefix):]
	for i := 0; i < len(body); i++ {
		if strings.IndexByte(base62, body[i]) < 0 {
			return false
		}
	}
	return checksum([]byte(body[:randomLen])) == body[randomLen:]
}

// Hash is what the database keeps of a token: hex SHA-256.
func Hash(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// ValidScope reports whether s names a scope.
func ValidScope(s string) bool { return slices.Contains(AllScopes, s) }
