package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"

	"github.com/quorum-review/quorum/internal/id"
	"github.com/quorum-review/quorum/internal/review"
)

// cursorVersion is the first byte of every cursor, so the format can change.
const cursorVersion = 1

// cursorCodec seals keyset positions into opaque cursors. A cursor is
// base64url of: version byte, 8-byte big-endian time, the review id, and a
// 16-byte HMAC over those and the listing it belongs to. A cursor that was
// altered, or that belongs to another listing, fails to open.
type cursorCodec struct {
	key []byte
}

var errBadCursor = errors.New("cursor is not one this listing returned")

func (c cursorCodec) mac(payload []byte, scope string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(payload)
	m.Write([]byte{0})
	m.Write([]byte(scope))
	return m.Sum(nil)[:16]
}

// seal encodes a position of the review listing named by scope.
func (c cursorCodec) seal(cur review.Cursor, scope string) string {
	return c.sealKeyset(cur.SynthesizedAt, cur.ID, scope)
}

// open decodes a review cursor made by seal for the same scope.
func (c cursorCodec) open(s, scope string) (review.Cursor, error) {
	at, rid, err := c.openKeyset(s, id.Review, scope)
	if err != nil {
		return review.Cursor{}, err
	}
	return review.Cursor{SynthesizedAt: at, ID: rid}, nil
}

// sealKeyset encodes the position (at, rid) of any newest-first listing
// keyed by (time, id); scope names the listing.
func (c cursorCodec) sealKeyset(at int64, rid, scope string) string {
	payload := make([]byte, 0, 1+8+len(rid)+16)
	payload = append(payload, cursorVersion)
	payload = binary.BigEndian.AppendUint64(payload, uint64(at))
	payload = append(payload, rid...)
	return base64.RawURLEncoding.EncodeToString(append(payload, c.mac(payload, scope)...))
}

// openKeyset decodes a cursor made by sealKeyset for the same scope, whose
// id has the given prefix.
func (c cursorCodec) openKeyset(s, prefix, scope string) (int64, string, error) {
	// Strict: the unused bits of the last character must be zero, so each
	// position has one cursor and an altered last character does not open.
	raw, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(raw) < 1+8+16 || raw[0] != cursorVersion {
		return 0, "", errBadCursor
	}
	payload, sum := raw[:len(raw)-16], raw[len(raw)-16:]
	if !hmac.Equal(sum, c.mac(payload, scope)) {
		return 0, "", errBadCursor
	}
	at, rid := int64(binary.BigEndian.Uint64(payload[1:9])), string(payload[9:])
	if !id.Valid(prefix, rid) {
		return 0, "", errBadCursor
	}
	return at, rid, nil
}

// listScope names a listing, case-insensitively as repositories are.
func listScope(accountID, owner, repo string, pr int) string {
	return strings.Join([]string{accountID, strings.ToLower(owner), strings.ToLower(repo), strconv.Itoa(pr)}, "\x00")
}
