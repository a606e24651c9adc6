// Package secrets finds credentials that a change adds to a repository,
// with gitleaks' rule set, for the security specialist.
//
// Each hunk's new-side text (its added lines and the unchanged lines
// around them, with their new-file numbers) is scanned as one fragment, so a
// secret that spans lines (a private key block) is found even when only
// part of it changed; a finding is reported only when it lies on at least
// one added line, so a secret the change did not write is never blamed on
// it. Deleted files are not scanned.
//
// gitleaks runs as its CLI does: default rules and allowlists, decoding of
// base64, hex and percent-encoded text, and a `gitleaks:allow` comment on a
// line silences it. Its allowlists already pass over AWS's documented
// example keys, templates ("${VAR}", "{{ .Values.x }}"), letters-only
// values and runs of one character. On top of them quorum drops, for
// precision: values that say they are placeholders (EXAMPLE, YOUR_…,
// changeme, xxxxx, <…>); quorum-token look-alikes with a bad checksum;
// private-key matches with no key between BEGIN and END; and, for the
// shape-based rules only, hex digests, UUIDs, test values, file names and
// pagination tokens. Severity and Redact document the severity mapping and
// the redaction rule.
//
// The secret itself never leaves this package: findings carry its redacted
// form, no finding has a suggested patch (replacing a credential with a
// placeholder is not a fix: it must be revoked), and nothing here logs.
// gitleaks' own logger logs matched values only at trace level, and stays at
// info.
package secrets

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/token"
)

// maxDecodeDepth is how many rounds of decoding (base64, hex, percent
// encoding) gitleaks applies to find an encoded secret: the gitleaks CLI's
// default, so quorum finds what `gitleaks git` would.
const maxDecodeDepth = 5

// Scanner finds secrets in the lines a change adds. It is safe for
// concurrent use: gitleaks' DetectContext only reads the detector's rules,
// allowlists and keyword trie, besides an atomic byte counter.
type Scanner struct {
	detector *detect.Detector
}

// New returns the scanner over gitleaks' default rules and allowlists,
// plus quorum's own token rule (RuleQuorumPAT). It is built once per
// process and shared: building it (viper decoding gitleaks' TOML, some
// 200 regular expressions compiled) takes 40 ms of CPU, 250 ms under the
// race detector, and every quorum command that reviews, and every test
// that makes a security specialist, asked for one.
func New() (*Scanner, error) { return shared() }

var shared = sync.OnceValues(build)

// build builds a scanner.
func build() (*Scanner, error) {
	cfg, err := defaultConfig()
	if err != nil {
		return nil, fmt.Errorf("load gitleaks rules: %w", err)
	}
	if err := addQuorumRule(&cfg); err != nil {
		return nil, fmt.Errorf("add %s rule: %w", RuleQuorumPAT, err)
	}
	// Path-only rules (a .p12 file, say) report a file, not a line; the
	// files they name are binary, which the change model skips before
	// specialists see them, and a text file of that name would be reported
	// once per hunk with no line. They are left out.
	for id, r := range cfg.Rules {
		if r.Regex == nil {
			delete(cfg.Rules, id)
		}
	}
	d := detect.NewDetector(cfg)
	d.MaxDecodeDepth = maxDecodeDepth
	return &Scanner{detector: d}, nil
}

// defaultConfig parses gitleaks' embedded default configuration the way
// detect.NewDetectorDefaultConfig does, but with a viper instance of its
// own: that function uses viper's global instance, which is neither ours to
// change nor safe to use from two goroutines.
func defaultConfig() (config.Config, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return config.Config{}, err
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return config.Config{}, err
	}
	return vc.Translate()
}

// Scan returns a finding for every secret on a line the change added, in
// every reviewed file of any type; deleted files are passed over. Findings
// come in file order, then line order within a file.
func (s *Scanner) Scan(ctx context.Context, c *change.Change) ([]specialist.Finding, error) {
	var out []specialist.Finding
	for _, f := range c.Files {
		if f.Status == change.StatusDeleted || f.Binary || f.NewPath == "" {
			continue
		}
		for i := range f.Hunks {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("scan %s for secrets: %w", f.NewPath, err)
			}
			out = append(out, s.scanHunk(ctx, f, &f.Hunks[i])...)
		}
	}
	if err := ctx.Err(); err != nil {
		// gitleaks stops early on a cancelled context and returns what it
		// has: a partial result is not a result.
		return nil, fmt.Errorf("scan for secrets: %w", err)
	}
	return specialist.OnChangedLines(c, out), nil
}

// scanHunk scans one hunk's new-side text and returns its findings, on
// added lines or not: Scan keeps those on added lines.
func (s *Scanner) scanHunk(ctx context.Context, f *change.File, h *change.Hunk) []specialist.Finding {
	var (
		text     strings.Builder
		numbers  []int // numbers[i] is the new-file number of the fragment's line i
		hasAdded bool
	)
	for _, l := range h.Lines {
		if l.Kind == change.KindDeleted {
			continue
		}
		// Every line ends in a newline: gitleaks places a match that runs
		// to the end of a fragment without one on the wrong lines.
		text.WriteString(strings.TrimSuffix(l.Text, "\r"))
		text.WriteByte('\n')
		numbers = append(numbers, l.NewNumber)
		hasAdded = hasAdded || l.Kind == change.KindAdded
	}
	if !hasAdded {
		return nil
	}
	found := s.detector.DetectContext(ctx, detect.Fragment{
		Raw:      text.String(),
		FilePath: f.NewPath,
	})
	var out []specialist.Finding
	type span struct {
		rule        string
		first, last int
	}
	seen := map[span]bool{}
	for _, g := range found {
		// gitleaks numbers the fragment's lines from 0 (StartLine is 0).
		first := min(max(g.StartLine, 0), len(numbers)-1)
		last := min(max(g.EndLine, first), len(numbers)-1)
		// With decoding on, gitleaks may report a secret twice: as written
		// and again after decoding a part of it (a PEM body).
		sp := span{g.RuleID, first, last}
		if seen[sp] || !keep(g) {
			continue
		}
		seen[sp] = true
		out = append(out, finding(f.NewPath, numbers[first], numbers[last], g, pairedWith(g, found)))
	}
	// gitleaks runs its rules in map order; a review is deterministic.
	slices.SortFunc(out, func(a, b specialist.Finding) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.EndLine, b.EndLine), strings.Compare(a.Rule, b.Rule))
	})
	return out
}

// keep applies quorum's checks on top of gitleaks' allowlists: a string
// shaped like a quorum token with a wrong checksum is a look-alike (a typo
// or a made-up value), whichever rule matched it; and placeholders and
// hashes are not secrets (see placeholder and looksLikeDigest); a private key
// match must hold a key (see pemBody); and shape-based matches that name a
// test value or a file, or sit under a name that is not a credential's,
// are dropped.
func keep(g report.Finding) bool {
	if tok, ok := quorumShaped(g.Secret); ok || g.RuleID == RuleQuorumPAT {
		return token.WellFormed(tok)
	}
	if placeholder(g.Secret) {
		return false
	}
	if g.RuleID == "private-key" {
		return pemBody(g.Secret)
	}
	if lowConfidence(g.RuleID) {
		return !looksLikeDigest(g.Secret) && !fixtureOrFileName(g.Secret) && !notCredentialKey.MatchString(g.Match)
	}
	return true
}

// pairWithin is how many lines apart a generic match and an issuer-specific
// one may be for the generic one to count as the other half of a credential
// pair.
const pairWithin = 3

// pairedWith returns the issuer-specific finding that a generic-api-key
// finding sits next to, if any, when the generic value is assigned to a
// name with "secret" or the issuer's name in it (aws_secret_access_key). gitleaks has no rule for the secret half of
// some pairs (AWS's secret access key is 40 characters of base64, like much
// else), so only its generic rule finds it; beside the key ID it belongs
// to, it is as live as the ID.
func pairedWith(g report.Finding, found []report.Finding) *report.Finding {
	if g.RuleID != "generic-api-key" {
		return nil
	}
	// What the value is assigned to: the match up to the value.
	name, _, _ := strings.Cut(strings.ToLower(g.Match), strings.ToLower(g.Secret))
	for i := range found {
		o := &found[i]
		issuer, _, _ := strings.Cut(o.RuleID, "-")
		if Severity(o.RuleID) == specialist.SeverityCritical && o.RuleID != "private-key" &&
			o.StartLine-pairWithin <= g.StartLine && g.StartLine <= o.EndLine+pairWithin &&
			(strings.Contains(name, "secret") || strings.Contains(name, issuer)) && keep(*o) {
			return o
		}
	}
	return nil
}

// finding turns a gitleaks finding into quorum's, with the secret redacted.
// A generic match paired with an issuer-specific one takes its severity.
func finding(path string, line, endLine int, g report.Finding, pair *report.Finding) specialist.Finding {
	f := specialist.Finding{
		Rule:     "gitleaks:" + g.RuleID,
		Category: specialist.CategorySecurity,
		Severity: Severity(g.RuleID),
		Path:     path,
		Line:     line,
		EndLine:  endLine,
		Engine:   specialist.EngineBuiltin,
	}
	kind, shown := Kind(g.RuleID), Redact(g.RuleID, g.Secret)
	var b strings.Builder
	switch {
	case pair != nil:
		f.Severity = Severity(pair.RuleID)
		f.Headline = "Hard-coded secret beside " + article(Kind(pair.RuleID))
		fmt.Fprintf(&b, "This line adds a secret-looking value (%s), matched by gitleaks' %q rule, "+
			"next to %s: most likely the secret half of that credential.", shown, g.RuleID, article(Kind(pair.RuleID)))
	case lowConfidence(g.RuleID):
		f.Headline = "Possible hard-coded secret: " + kind
		fmt.Fprintf(&b, "This line adds what looks like %s (%s), matched by gitleaks' %q rule. %s",
			article(kind), shown, g.RuleID, g.Description)
		if inTestCode(path) {
			// A shape-only match in a test is most often the test's own
			// fixture (a signing secret, a password of a test user): it is
			// reported, but does not block the change. An issuer's format
			// (an AWS key ID) in a test keeps its severity: a real key in
			// a test is as leaked as anywhere else.
			f.Severity = specialist.SeverityLow
			f.Headline += " (in test code)"
			b.WriteString(" The file is test code, where a value of this shape is usually a fixture; " +
				"that is why this is reported at low severity.")
		}
	default:
		f.Headline = "Hard-coded " + kind
		fmt.Fprintf(&b, "This line adds %s (%s), matched by gitleaks' %q rule. %s",
			article(kind), shown, g.RuleID, g.Description)
	}
	b.WriteString("\n\nAnyone who can read this pull request or the repository's history can use it, " +
		"and deleting it in a later commit does not undo that. If it is real:\n" +
		"1. Revoke or rotate it with its issuer now; treat it as leaked from the moment it was pushed.\n" +
		"2. Read it at run time from the environment or a secret store (Vault, a cloud secret manager, " +
		"the CI system's secrets) instead of from the source.\n" +
		"3. If it reached a shared branch, rewriting history (git filter-repo) removes it from future " +
		"clones, but not from forks and clones that already have it: rotating is what makes it safe.\n\n")
	if lowConfidence(g.RuleID) && pair == nil {
		b.WriteString("This rule matches on shape, not on a known format, so it may be a false alarm: ")
	} else {
		b.WriteString("If it is not a live credential: ")
	}
	b.WriteString("make a deliberate test fixture visible as one in the value itself " +
		"(EXAMPLE in it, say), or add a `gitleaks:allow` comment to the line.")
	f.Body = b.String()
	return f
}

// quorumShaped returns the quorum-token-shaped part of secret ("qrm_" and
// 36 base62 characters, not followed by another), if it has one.
func quorumShaped(secret string) (string, bool) {
	i := strings.Index(secret, token.Prefix)
	if i < 0 || len(secret)-i < token.Len {
		return "", false
	}
	tok, rest := secret[i:i+token.Len], secret[i+token.Len:]
	if !isBase62(tok[len(token.Prefix):]) || rest != "" && isBase62(rest[:1]) {
		return "", false
	}
	return tok, true
}

func isBase62(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// article puts "a" or "an" before a kind of secret.
func article(kind string) string {
	if kind != "" && strings.ContainsRune("AEIOUaeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}
