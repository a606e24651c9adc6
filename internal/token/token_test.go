package token

import (
	"math"
	"strings"
	"testing"
)

func TestGenerateFormat(t *testing.T) {
	t.Parallel()
	// The design promises at least 160 random bits; the package comment says
	// 178. Both follow from randomLen base62 characters.
	if bits := float64(randomLen) * math.Log2(float64(len(base62))); bits < 160 || bits > 179 {
		t.Errorf("random part holds %.1f bits, want ≥ 160 (documented: 178)", bits)
	}
	if Len != 40 {
		t.Errorf("Len = %d, want 40 (qrm_ + 30 + 6)", Len)
	}
	seen := map[string]bool{}
	for range 200 {
		tok, err := Generate()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(tok, "qrm_") {
			t.Fatalf("token %q lacks the qrm_ prefix", tok)
		}
		if len(tok) != Len {
			t.Fatalf("token %q has length %d, want %d", tok, len(tok), Len)
		}
		for _, c := range tok[len(Prefix):] {
			if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
				t.Fatalf("token %q holds %q, not base62", tok, c)
			}
		}
		if !WellFormed(tok) {
			t.Fatalf("WellFormed(%q) = false for a generated token", tok)
		}
		if seen[tok] {
			t.Fatalf("token %q generated twice", tok)
		}
		seen[tok] = true
	}
}

func TestWellFormedRejects(t *testing.T) {
	t.Parallel()
	tok, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	body := tok[len(Prefix):]
	random := body[:randomLen]

	// A different last checksum digit.
	last := body[len(body)-1]
	other := byte('0')
	if last == '0' {
		other = '1'
	}
	// A character outside base62, with a checksum that matches it, so only
	// the character check can reject it.
	badRandom := "-" + random[1:]

	for name, s := range map[string]string{
		"empty":             "",
		"wrong checksum":    tok[:len(tok)-1] + string(other),
		"changed random":    Prefix + swapCase(random[:1]) + body[1:],
		"wrong prefix":      "qrx_" + body,
		"upper prefix":      "QRM_" + body,
		"no prefix":         body,
		"short":             tok[:len(tok)-1],
		"long":              tok + "0",
		"non-base62 char":   Prefix + badRandom + checksum([]byte(badRandom)),
		"underscore":        Prefix + "_" + random[1:] + checksum([]byte("_"+random[1:])),
		"github token":      "ghp_" + body,
		"whitespace padded": " " + tok[:len(tok)-1],
	} {
		if WellFormed(s) {
			t.Errorf("%s: WellFormed(%q) = true", name, s)
		}
	}
}

func swapCase(s string) string {
	if strings.ToUpper(s) != s {
		return strings.ToUpper(s)
	}
	if strings.ToLower(s) != s {
		return strings.ToLower(s)
	}
	// A digit: any other digit.
	if s == "0" {
		return "1"
	}
	return "0"
}

func TestHash(t *testing.T) {
	t.Parallel()
	// SHA-256 of "abc" (FIPS 180-2, appendix B.1).
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := Hash("abc"); got != want {
		t.Errorf("Hash(abc) = %s, want %s", got, want)
	}
	tok, _ := Generate()
	if h := Hash(tok); len(h) != 64 || strings.Trim(h, "0123456789abcdef") != "" || strings.Contains(h, tok) {
		t.Errorf("Hash(%q) = %q, want 64 lowercase hex digits", tok, h)
	}
}

func TestValidScope(t *testing.T) {
	t.Parallel()
	for _, s := range AllScopes {
		if !ValidScope(s) {
			t.Errorf("ValidScope(%q) = false", s)
		}
	}
	for _, s := range []string{"", "reviews", "reviews:write", "REVIEWS:READ", " reviews:read"} {
		if ValidScope(s) {
			t.Errorf("ValidScope(%q) = true", s)
		}
	}
}
