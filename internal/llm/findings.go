package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/specialist"
)

// findingsSchema is the JSON schema of an answer. It keeps to the subset
// OpenAI's strict structured outputs accept: every property required,
// no additional properties, optional values as a union with null.
var findingsSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "findings": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "path": {"type": "string", "description": "The file's path as shown after \"File:\"."},
          "line": {"type": "integer", "description": "New-file number of the first line of the problem; 0 for the file as a whole."},
          "end_line": {"type": "integer", "description": "New-file number of the last line of the problem; equal to line for one line."},
          "severity": {"type": "string", "enum": ["critical", "high", "medium", "low", "info"]},
          "category": {"type": "string", "enum": ["security", "logic", "performance", "tests", "maintainability"]},
          "headline": {"type": "string", "description": "One line that names the problem."},
          "body": {"type": "string", "description": "Why it matters and what to do."},
          "quote": {"type": "string", "description": "The code of the line(s) the finding is about, copied exactly from the change without line numbers or markers; empty for line 0."},
          "suggested_replacement": {"type": ["string", "null"], "description": "The exact new text of lines line to end_line, or null."}
        },
        "required": ["path", "line", "end_line", "severity", "category", "headline", "body", "quote", "suggested_replacement"],
        "additionalProperties": false
      }
    }
  },
  "required": ["findings"],
  "additionalProperties": false
}`)

// rawFinding is one finding as the model wrote it.
type rawFinding struct {
	Path                 string  `json:"path"`
	Line                 int     `json:"line"`
	EndLine              int     `json:"end_line"`
	Severity             string  `json:"severity"`
	Category             string  `json:"category"`
	Headline             string  `json:"headline"`
	Body                 string  `json:"body"`
	Quote                string  `json:"quote"`
	SuggestedReplacement *string `json:"suggested_replacement"`
}

// parseAnswer reads the answer's JSON. A code fence around it (which some
// local models add in json_object mode) is tolerated; an answer that is not
// an object with a findings list is an error. A finding that does not
// decode is skipped, not the whole answer.
func parseAnswer(content string) ([]rawFinding, error) {
	s := strings.TrimSpace(content)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```json")
		s = strings.TrimPrefix(s, "```")
		s = strings.TrimSuffix(strings.TrimSpace(s), "```")
	}
	var top struct {
		Findings *[]json.RawMessage `json:"findings"`
	}
	if err := json.Unmarshal([]byte(s), &top); err != nil {
		return nil, fmt.Errorf("%w: answer is not JSON: %v", ErrMalformed, err)
	}
	if top.Findings == nil {
		return nil, fmt.Errorf("%w: answer has no findings list", ErrMalformed)
	}
	var out []rawFinding
	for _, m := range *top.Findings {
		var f rawFinding
		if json.Unmarshal(m, &f) == nil {
			out = append(out, f)
		}
	}
	return out, nil
}

// salvage reads the findings that are complete in an answer cut off at
// the token limit: `{"findings": [{…}, {…}, {"path": "a.go", "li` gives the
// first two. None when the cut came before the first was complete.
func salvage(content string) []rawFinding {
	s := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(content), "```json"), "```")
	i := strings.Index(s, `"findings"`)
	if i < 0 {
		return nil
	}
	j := strings.IndexByte(s[i:], '[')
	if j < 0 {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(s[i+j:]))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil
	}
	var out []rawFinding
	for dec.More() {
		var f rawFinding
		if dec.Decode(&f) != nil {
			break
		}
		out = append(out, f)
	}
	return out
}

// findings turns the model's findings into the specialist's: those with an
// unknown path, severity or category are dropped, and so are those that do
// not touch a line the change added or modified (see docs/llm.md: a line
// the model was not asked about is more likely a mistake than a file-level
// remark worth keeping). Line 0 is kept as a file-level finding on a
// changed file. A finding on lines must quote their code, and the quote
// must be in the head file near the lines it names: it is moved to where
// the quote really is, and dropped when the quote is nowhere near (a model
// that misremembers the code is more likely wrong about it too). It returns
// how many were dropped for their quote.
func (e *Engine) findings(ctx context.Context, c *change.Change, raws []rawFinding) ([]specialist.Finding, int) {
	files := map[string]*change.File{}
	for _, f := range c.Files {
		files[f.Path()] = f
	}
	// Each head file is read once, for the quotes and the patches both.
	type headFile struct {
		data  []byte
		lines []string
		ok    bool
	}
	heads := map[string]*headFile{}
	head := func(path string) *headFile {
		if h, ok := heads[path]; ok {
			return h
		}
		h := &headFile{}
		if data, err := c.ReadFile(ctx, path); err == nil {
			h.data, h.lines, h.ok = data, strings.Split(string(data), "\n"), true
		}
		heads[path] = h
		return h
	}
	type key struct {
		path          string
		line, endLine int
		headline      string
	}
	replacements := map[key]*string{}
	unquoted := 0
	var out []specialist.Finding
	for i := range raws {
		r := &raws[i]
		if r.Line < 0 {
			continue
		}
		r.Path = knownPath(files, r.Path)
		r.Severity = strings.ToLower(strings.TrimSpace(r.Severity))
		r.Category = strings.ToLower(strings.TrimSpace(r.Category))
		end := r.EndLine
		if r.Line == 0 {
			end = 0
		} else if end < r.Line {
			end = r.Line
		}
		f := specialist.Finding{
			Rule:     "llm:" + e.name,
			Category: r.Category,
			Severity: r.Severity,
			Path:     r.Path,
			Line:     r.Line,
			EndLine:  end,
			Headline: strings.Join(strings.Fields(r.Headline), " "),
			Body:     strings.TrimSpace(r.Body),
			Engine:   specialist.EngineLLM,
			Model:    e.cfg.Model,
		}
		if f.Validate() != nil || files[f.Path] == nil {
			continue
		}
		replacement := r.SuggestedReplacement
		if f.Line > 0 {
			first, last, ok := locateQuote(head(f.Path).lines, r.Quote, f.Line, f.EndLine)
			if !ok {
				unquoted++
				continue
			}
			if first < f.Line || last > f.EndLine {
				// The model misnumbered the lines: the finding goes where
				// the code it quotes is. Its replacement was written for
				// the lines it named, so it is not offered.
				shift := first - f.Line
				f.Line, f.EndLine = first, max(f.EndLine+shift, last)
				replacement = nil
			}
		}
		replacements[key{f.Path, f.Line, f.EndLine, f.Headline}] = replacement
		out = append(out, f)
	}
	out = specialist.OnChangedLines(c, out)
	// Patches only for the findings that are kept.
	for i := range out {
		r := replacements[key{out[i].Path, out[i].Line, out[i].EndLine, out[i].Headline}]
		if out[i].Line == 0 || !fitHunk(files[out[i].Path], &out[i]) || r == nil {
			continue
		}
		h := head(out[i].Path)
		if !h.ok {
			continue
		}
		out[i].SuggestedPatch = suggestedPatch(out[i].Path, h.data, out[i].Line, out[i].EndLine, *r)
	}
	return out, unquoted
}

// quoteWindow is how many lines either side of the lines a finding names
// its quote is looked for.
const quoteWindow = 5

// minQuoteFragment is the shortest quote of one line that may be part of
// a line rather than all of it: shorter fragments ("err", "}") are too
// common to say which code the model read.
const minQuoteFragment = 8

// numberMarker is the line number and marker of the prompt's rendering
// ("15 + ", "6 "), which a model may copy into its quote.
var numberMarker = regexp.MustCompile(`^\d+ (\+ )?`)

// locateQuote finds quote in the head file's lines near line..end (1-based)
// and returns the first and last lines it covers. Whitespace is normalised
// and blank lines ignored on both sides; a quote of one line may be part
// of a line. Of several places the nearest to line is taken.
func locateQuote(head []string, quote string, line, end int) (first, last int, ok bool) {
	var plain, stripped []string
	numbered := true
	for l := range strings.SplitSeq(quote, "\n") {
		l = normalize(l)
		if l == "" {
			continue
		}
		plain = append(plain, l)
		s := numberMarker.ReplaceAllString(l, "")
		numbered = numbered && s != l
		stripped = append(stripped, s)
	}
	if len(plain) == 0 {
		return 0, 0, false
	}
	// The file's non-blank lines near the finding, with their numbers.
	type codeLine struct {
		n    int
		text string
	}
	var code []codeLine
	for n := max(1, line-quoteWindow); n <= min(len(head), end+quoteWindow+len(plain)); n++ {
		if t := normalize(head[n-1]); t != "" {
			code = append(code, codeLine{n, t})
		}
	}
	matches := func(q []string, at int) bool {
		if at+len(q) > len(code) {
			return false
		}
		for j, ql := range q {
			t := code[at+j].text
			if t != ql && (len(q) > 1 || len(ql) < minQuoteFragment || !strings.Contains(t, ql)) {
				return false
			}
		}
		return true
	}
	candidates := [][]string{plain}
	if numbered {
		candidates = append(candidates, stripped)
	}
	best := -1
	for _, q := range candidates {
		for at := range code {
			n := code[at].n
			if n < line-quoteWindow || n > end+quoteWindow || !matches(q, at) {
				continue
			}
			if best < 0 || distance(n, line) < distance(first, line) {
				best, first, last = at, n, code[at+len(q)-1].n
			}
		}
		if best >= 0 {
			return first, last, true
		}
	}
	return 0, 0, false
}

func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }

func distance(a, b int) int { return max(a-b, b-a) }

// knownPath returns the changed file's path the model meant: as written,
// without a "./" or diff "b/" prefix models sometimes add, or unquoted.
func knownPath(files map[string]*change.File, p string) string {
	p = strings.TrimSpace(p)
	if files[p] != nil {
		return p
	}
	for _, prefix := range []string{"./", "b/", "/"} {
		if q := strings.TrimPrefix(p, prefix); q != p && files[q] != nil {
			return q
		}
	}
	// A path the prompt showed quoted (shownPath).
	if q, err := strconv.Unquote(p); err == nil && files[q] != nil {
		return q
	}
	return p
}

// fitHunk trims a finding's range to the hunk of its first changed line, so
// a platform can place it as an inline comment (which must lie within one
// hunk). It reports whether the range was left as the model gave it: a
// suggested replacement of a trimmed range would replace the wrong lines.
func fitHunk(f *change.File, fd *specialist.Finding) bool {
	if f == nil {
		return false
	}
	first := 0
	for l := fd.Line; l <= fd.EndLine; l++ {
		if f.Changed(l) {
			first = l
			break
		}
	}
	h := f.HunkFor(first)
	if h == nil {
		return false
	}
	line, end := max(fd.Line, h.NewStart), min(fd.EndLine, h.NewStart+h.NewLines-1)
	whole := line == fd.Line && end == fd.EndLine
	fd.Line, fd.EndLine = line, end
	return whole
}

// dedupe drops findings repeated across chunks and sorts by path and line.
func dedupe(fs []specialist.Finding) []specialist.Finding {
	type key struct {
		path          string
		line, endLine int
		headline      string
	}
	seen := map[key]bool{}
	out := fs[:0:0]
	for _, f := range fs {
		k := key{f.Path, f.Line, f.EndLine, f.Headline}
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b specialist.Finding) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return out
}

// contextLines is how many unchanged lines a suggested patch shows either
// side of the replaced lines, as git does.
const contextLines = 3

// suggestedPatch returns a unified diff against head that replaces lines
// line..end (1-based, inclusive) of path with replacement, or "" when the
// lines are not in the file or the replacement changes nothing.
func suggestedPatch(path string, head []byte, line, end int, replacement string) string {
	if bytes.IndexByte(head, 0) >= 0 {
		return ""
	}
	lines := strings.SplitAfter(string(head), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if line < 1 || end < line || end > len(lines) {
		return ""
	}
	eofNewline := strings.HasSuffix(string(head), "\n")
	old := lines[line-1 : end]
	// Keep the file's line endings: CRLF when the replaced lines use it.
	eol := "\n"
	if strings.HasSuffix(strings.TrimSuffix(old[len(old)-1], "\n"), "\r") {
		eol = "\r\n"
	}
	var repl []string
	if replacement != "" {
		for l := range strings.SplitSeq(strings.TrimSuffix(replacement, "\n"), "\n") {
			repl = append(repl, strings.TrimSuffix(l, "\r")+eol)
		}
	}
	if slices.Equal(repl, stripLast(old, eofNewline, end == len(lines), eol)) {
		return ""
	}
	before := lines[max(0, line-1-contextLines) : line-1]
	after := lines[end:min(len(lines), end+contextLines)]
	atEOF := end+len(after) == len(lines)

	oldStart := line - len(before)
	oldCount := len(before) + len(old) + len(after)
	newCount := len(before) + len(repl) + len(after)
	newStart := oldStart
	if oldCount == 0 {
		oldStart--
	}
	if newCount == 0 {
		newStart--
	}

	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", path, path, path, path)
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", oldStart, oldCount, newStart, newCount)
	// The file's final line, when it has no newline, is marked as git
	// marks it; the replacement inherits the file's lack of one.
	write := func(prefix string, ls []string, last bool) {
		for i, l := range ls {
			b.WriteString(prefix)
			b.WriteString(l)
			if !strings.HasSuffix(l, "\n") {
				b.WriteString("\n")
			}
			if last && i == len(ls)-1 && !eofNewline {
				b.WriteString("\\ No newline at end of file\n")
			}
		}
	}
	for _, l := range before {
		write(" ", []string{l}, false)
	}
	write("-", old, atEOF && len(after) == 0)
	if atEOF && len(after) == 0 && !eofNewline && len(repl) > 0 {
		repl[len(repl)-1] = strings.TrimSuffix(repl[len(repl)-1], eol)
	}
	write("+", repl, atEOF && len(after) == 0)
	write(" ", after, atEOF)
	return b.String()
}

// stripLast returns old as the replacement would have to be written to
// change nothing: with the file's last line's missing newline supplied.
func stripLast(old []string, eofNewline, lastIsEOF bool, eol string) []string {
	if eofNewline || !lastIsEOF {
		return old
	}
	out := slices.Clone(old)
	out[len(out)-1] += eol
	return out
}

// capPerFile keeps at most n findings per file, the most severe (and of
// equal severity the first), in path and line order, and says how many
// it left out.
func capPerFile(fs []specialist.Finding, n int) ([]specialist.Finding, int) {
	byPath := map[string][]int{}
	for i, f := range fs {
		byPath[f.Path] = append(byPath[f.Path], i)
	}
	keep := make([]bool, len(fs))
	for _, idx := range byPath {
		slices.SortStableFunc(idx, func(a, b int) int {
			return specialist.SeverityRank(fs[a].Severity) - specialist.SeverityRank(fs[b].Severity)
		})
		for _, i := range idx[:min(n, len(idx))] {
			keep[i] = true
		}
	}
	out := fs[:0:0]
	for i, f := range fs {
		if keep[i] {
			out = append(out, f)
		}
	}
	return out, len(fs) - len(out)
}
