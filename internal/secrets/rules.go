package secrets

import (
	"regexp"
	"strings"

	"github.com/zricethezav/gitleaks/v8/config"
	gitleaksregexp "github.com/zricethezav/gitleaks/v8/regexp"

	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/token"
)

// RuleQuorumPAT is the id of quorum's own rule, for its personal access
// tokens; the finding's rule is "gitleaks:quorum-pat" like the others, since
// it runs inside gitleaks' detector.
const RuleQuorumPAT = "quorum-pat"

// addQuorumRule adds the rule for quorum's tokens to cfg. The regular
// expression only finds the shape; Scan then keeps a match only when
// token.WellFormed accepts its checksum, so a look-alike is not reported.
func addQuorumRule(cfg *config.Config) error {
	r := config.Rule{
		RuleID:      RuleQuorumPAT,
		Description: "Found a quorum personal access token, which grants read access to an account's reviews and findings and may manage its webhooks.",
		Regex:       gitleaksregexp.MustCompile(`\b(` + token.Prefix + `[0-9A-Za-z]{36})\b`),
		SecretGroup: 1,
		Keywords:    []string{token.Prefix},
		Tags:        []string{"quorum"},
	}
	if err := r.Validate(); err != nil {
		return err
	}
	cfg.Rules[r.RuleID] = r
	cfg.OrderedRules = append(cfg.OrderedRules, r.RuleID)
	for _, k := range r.Keywords {
		cfg.Keywords[strings.ToLower(k)] = struct{}{}
	}
	return nil
}

// Severity maps a gitleaks rule to a finding's severity:
//
//   - critical: a rule for one issuer's credential format (cloud keys,
//     private keys, tokens with a known prefix, webhooks with their secret
//     path, quorum's own tokens). The format is specific and gitleaks'
//     entropy checks and allowlists have already passed it, so it is very
//     likely live, and anyone who reads it can use it.
//   - high: rules that match on shape or on a nearby word rather than on a
//     known format (generic-api-key, JWTs, credentials in curl commands,
//     Kubernetes secret manifests, passwords in config files) and test-mode
//     keys: often real, but false alarms happen.
//   - medium: identifiers and publishable keys (OAuth client ids, public
//     keys): not secrets on their own, but usually found next to one, and
//     not something to commit deliberately.
//
// High and critical both block a merge under the default blocking severity;
// critical ranks first.
func Severity(ruleID string) string {
	switch {
	case identifier(ruleID):
		return specialist.SeverityMedium
	case lowConfidence(ruleID):
		return specialist.SeverityHigh
	default:
		return specialist.SeverityCritical
	}
}

// lowConfidenceRules are gitleaks rules that match on shape or context, not
// on an issuer's format.
var lowConfidenceRules = map[string]bool{
	"generic-api-key":         true,
	"jwt":                     true,
	"jwt-base64":              true,
	"curl-auth-header":        true,
	"curl-auth-user":          true,
	"kubernetes-secret-yaml":  true,
	"hashicorp-tf-password":   true,
	"nuget-config-password":   true,
	"easypost-test-api-token": true,
	"sidekiq-sensitive-url":   true,
}

func lowConfidence(ruleID string) bool {
	return lowConfidenceRules[ruleID] || strings.HasPrefix(ruleID, "generic-")
}

// identifier reports whether the rule finds an identifier or a publishable
// key rather than a secret.
func identifier(ruleID string) bool {
	for _, suffix := range []string{"-client-id", "-access-id", "-api-id", "-public-key", "-pub-key", "-pub-api-key"} {
		if strings.HasSuffix(ruleID, suffix) {
			return true
		}
	}
	return false
}

// words spells rule-id words the way their owners do; others are kept in
// lower case, and the first word (usually the issuer) is capitalized.
var words = map[string]string{
	"aws": "AWS", "api": "API", "id": "ID", "url": "URL", "jwt": "JWT", "pat": "personal access token",
	"gcp": "GCP", "oauth": "OAuth", "ci": "CI", "cicd": "CI/CD", "npm": "npm", "pypi": "PyPI",
	"github": "GitHub", "gitlab": "GitLab", "openai": "OpenAI", "digitalocean": "DigitalOcean",
	"hashicorp": "HashiCorp", "huggingface": "Hugging Face", "linkedin": "LinkedIn",
	"sendgrid": "SendGrid", "sendinblue": "Sendinblue", "newrelic": "New Relic", "new": "New",
	"relic": "Relic", "tf": "Terraform", "ca": "CA", "scim": "SCIM", "yaml": "YAML",
	"rubygems": "RubyGems", "planetscale": "PlanetScale", "mailchimp": "Mailchimp",
	"launchdarkly": "LaunchDarkly", "travisci": "Travis CI", "droneci": "Drone CI",
	"easypost": "EasyPost", "pagerduty": "PagerDuty", "flyio": "Fly.io", "1password": "1Password",
	"ptt": "pipeline trigger token", "rrt": "runner registration token",
}

// kinds overrides the name derived from a rule id where the id says less
// than it could.
var kinds = map[string]string{
	"aws-access-token":       "AWS access key ID",
	"private-key":            "private key",
	"generic-api-key":        "API key, password or other credential (generic pattern)",
	"jwt":                    "JSON Web Token",
	"jwt-base64":             "base64-encoded JSON Web Token",
	"curl-auth-header":       "credential in a curl Authorization header",
	"curl-auth-user":         "credential in a curl --user option",
	"kubernetes-secret-yaml": "Kubernetes Secret with data",
	RuleQuorumPAT:            "quorum personal access token",
}

// Kind names the kind of secret a gitleaks rule finds, for a headline:
// "aws-access-token" is "AWS access key ID", "github-pat" "GitHub personal
// access token".
func Kind(ruleID string) string {
	if k, ok := kinds[ruleID]; ok {
		return k
	}
	parts := strings.Split(ruleID, "-")
	for i, p := range parts {
		switch w, ok := words[p]; {
		case ok:
			parts[i] = w
		case i == 0 && p != "":
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, " ")
}

// placeholderWords mark a value as a stand-in in examples and templates.
// They are matched case-insensitively inside the secret; each is long
// enough that a random credential contains it by chance far less than once
// in a million.
var placeholderWords = []string{"example", "placeholder", "changeme", "change_me", "dummy", "redacted", "xxxxx", "your_", "your-", "<", ">", "${", "{{"}

// placeholder reports whether a matched value is a placeholder rather than
// a credential. gitleaks' allowlists catch most (AWS's documented example
// keys, "${VAR}", "xxxxxx", values of letters only); this catches what
// they leave to each rule, for every rule.
func placeholder(secret string) bool {
	s := strings.ToLower(secret)
	for _, w := range placeholderWords {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// digest matches hex digests of the common hash lengths (MD5, SHA-1,
// SHA-256, SHA-512), git object names, and UUIDs.
var digest = regexp.MustCompile(`^(?:[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}|[0-9a-f]{128}|[0-9A-F]{32}|[0-9A-F]{40}|[0-9A-F]{64}|[0-9A-F]{128}|(?i:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}))$`)

// looksLikeDigest reports whether a value caught by a shape-based rule is
// more likely a checksum, a commit or an identifier than a credential.
// Issuer-specific rules are not second-guessed: their formats are exact.
func looksLikeDigest(secret string) bool {
	return digest.MatchString(secret)
}

// Redact returns the form of a secret that findings show: its first four
// characters and "****" when the rule finds an issuer's format and the
// secret is at least 20 characters long (so at least 16 stay hidden, and
// the four shown are mostly the issuer's public prefix, "AKIA" or "ghp_",
// which helps the author find the value), "****" alone otherwise (generic
// matches, where the first characters are part of the secret itself;
// private keys, whose first characters say nothing). The mask has a fixed
// length, so the secret's length is not revealed either.
func Redact(ruleID, secret string) string {
	const mask = "****"
	if lowConfidence(ruleID) || ruleID == "private-key" || len(secret) < 20 || !isBase62(strings.Trim(secret[:4], "_-")) {
		return mask
	}
	return secret[:4] + mask
}

// fixture matches values of shape-based rules that say they are test
// values or name a file: "sk-test-…", "mock-token", "server.key.pem".
var fixture = regexp.MustCompile(`(?i)test|mock|\.(?:b64|pem|key|crt|cer|csr|der|p12|pfx|jks|json|ya?ml|toml|ini|conf|cfg|env|txt|xml)$`)

func fixtureOrFileName(secret string) bool { return fixture.MatchString(secret) }

// notCredentialKey matches what a generic match was assigned to when the
// name says it is not a credential: pagination and continuation tokens,
// which APIs hand out to anyone who lists.
var notCredentialKey = regexp.MustCompile(`(?i)(?:page|next|prev(?:ious)?|continuation|cursor|sync)[_.-]?token`)

// pemBody reports whether a private-key match is a key: a BEGIN line, at
// least 64 characters of base64 (headers such as Proc-Type aside), and an
// END line. gitleaks' rule also matches from one BEGIN line to the next
// across code that only names the formats (a list of PEM headers, say).
func pemBody(secret string) bool {
	_, rest, ok := strings.Cut(secret, "-----BEGIN")
	if !ok {
		return false
	}
	if _, rest, ok = strings.Cut(rest, "-----"); !ok {
		return false
	}
	body, _, ok := strings.Cut(rest, "-----END")
	if !ok {
		return false
	}
	var b64, other int
	for _, line := range strings.Split(body, "\n") {
		if strings.Contains(line, ": ") { // an RFC 1421 header: Proc-Type, DEK-Info
			continue
		}
		for _, c := range line {
			switch {
			case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '+', c == '/', c == '=':
				b64++
			case c == ' ', c == '\t', c == '\r', c == '"', c == '\'', c == '`', c == '\\':
				// layout and string quoting
			default:
				other++
			}
		}
	}
	return b64 >= 64 && other*10 <= b64
}
