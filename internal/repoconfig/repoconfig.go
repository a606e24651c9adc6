// Package repoconfig reads a repository's review configuration, the file
// .quorum.yaml (or .quorum.yml) at the root of the repository.
//
// The file is read from the pull request's BASE commit, never from its
// head: a pull request cannot switch off, narrow or weaken its own review
// (disable a specialist, raise the blocking severity, exclude the files it
// touches). A change to .quorum.yaml takes effect for the pull requests
// opened against the branch after it has been merged.
//
// Reading never fails a review. A missing file means the defaults; a file
// that is wrong in places is applied where it is right, and each wrong
// field falls back to its default with a problem, a sentence naming the
// key and its line, for the review's summary. A file that is not YAML at
// all gives the defaults and one problem.
package repoconfig

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/polyglot"
	"github.com/quorum-review/quorum/internal/specialist"
)

// FileNames are the names the configuration is looked for under, in this
// order; the first that exists at base is read.
var FileNames = []string{".quorum.yaml", ".quorum.yml"}

// Version is the only version of the file format there is.
const Version = 1

// Defaults for the fields a file leaves out or gets wrong.
const (
	DefaultBlockingSeverity = specialist.SeverityHigh
	DefaultMaxFindings      = 50
)

// maxFileSize bounds the file read; a configuration is a few hundred
// bytes, and YAML this large is a mistake or an attack.
const maxFileSize = 256 << 10

// KnownSpecialists are the specialist names the file may enable, and the
// ones enabled by default.
var KnownSpecialists = []string{specialist.Logic, specialist.Security, specialist.Performance, specialist.Tests}

// Config is a repository's review configuration, with every field set:
// defaults stand where the file said nothing or something wrong.
type Config struct {
	// File is the file the configuration was read from, empty when there
	// was none at base.
	File string
	// Version is the file format's version, always 1.
	Version int
	// Specialists are the enabled specialists, in the file's order.
	Specialists []string
	// Quorum is how many of the enabled specialists must succeed for a
	// review to be posted.
	Quorum int
	// BlockingSeverity is the severity at and above which a finding makes
	// the verdict request_changes.
	BlockingSeverity string
	// Paths limits the files reviewed.
	Paths Paths
	// Instructions are extra instructions for the LLM engine, per path.
	Instructions []Instruction
	// MaxFindings bounds the findings one review posts.
	MaxFindings int
	// Rules turns rules of the analyzers of other languages on and off
	// ("ruff:S311").
	Rules specialist.Rules
}

// Paths limits a review to some of a change's files with doublestar globs
// ("**" matches any number of directories), matched against the path from
// the repository's root.
type Paths struct {
	// Include, when not empty, keeps only the files matching one of them.
	Include []string
	// Exclude drops the files matching one of them, whatever Include says.
	Exclude []string
}

// Instruction is text given to the LLM engine when it reviews a file
// matching Path.
type Instruction struct {
	Path string
	Text string
}

// Default returns the configuration of a repository without a file.
func Default() Config {
	return Config{
		Version:          Version,
		Specialists:      slices.Clone(KnownSpecialists),
		Quorum:           defaultQuorum(len(KnownSpecialists)),
		BlockingSeverity: DefaultBlockingSeverity,
		MaxFindings:      DefaultMaxFindings,
	}
}

// defaultQuorum is a majority of n enabled specialists.
func defaultQuorum(n int) int { return n/2 + 1 }

// Includes reports whether the file at path is reviewed: it matches an
// include glob (or there are none) and no exclude glob.
func (c Config) Includes(path string) bool {
	if len(c.Paths.Include) > 0 && !matchAny(c.Paths.Include, path) {
		return false
	}
	return !matchAny(c.Paths.Exclude, path)
}

// Enabled reports whether the named specialist is enabled.
func (c Config) Enabled(name string) bool { return slices.Contains(c.Specialists, name) }

// Blocks reports whether a finding of severity makes the verdict
// request_changes: it is at or above the blocking severity.
func (c Config) Blocks(severity string) bool {
	r := specialist.SeverityRank(severity)
	return r >= 0 && r <= specialist.SeverityRank(c.BlockingSeverity)
}

// InstructionsFor returns the texts of the instructions whose glob matches
// path, in the file's order.
func (c Config) InstructionsFor(path string) []string {
	var out []string
	for _, in := range c.Instructions {
		if ok, _ := doublestar.Match(in.Path, path); ok {
			out = append(out, in.Text)
		}
	}
	return out
}

func matchAny(globs []string, path string) bool {
	for _, g := range globs {
		if ok, _ := doublestar.Match(g, path); ok {
			return true
		}
	}
	return false
}

// Load reads the configuration of c's repository from c's base commit. It
// always returns a usable configuration; problems lists, as sentences for
// the review's summary, what in the file was wrong and ignored.
func Load(ctx context.Context, c *change.Change) (Config, []string) {
	for _, name := range FileNames {
		data, err := c.ReadFileAt(ctx, c.BaseSHA, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Default(), []string{fmt.Sprintf("%s could not be read at the base commit (%v); the defaults apply.", name, err)}
		}
		return Parse(name, data)
	}
	return Default(), nil
}

// Parse reads a configuration file's contents; name is the file's name,
// for the problems.
func Parse(name string, data []byte) (Config, []string) {
	cfg := Default()
	if len(data) > maxFileSize {
		return cfg, []string{fmt.Sprintf("%s is %d bytes, more than the %d read; the defaults apply.", name, len(data), maxFileSize)}
	}
	p := &parser{name: name}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			cfg.File = name
			return cfg, nil // an empty file says nothing
		}
		return cfg, []string{fmt.Sprintf("%s is not valid YAML (%s); the defaults apply.", name, strings.TrimPrefix(err.Error(), "yaml: "))}
	}
	cfg.File = name
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		p.addf(&extra, "the file holds more than one YAML document; only the first is read")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	root = resolve(root)
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return cfg, p.sorted()
	}
	if root.Kind != yaml.MappingNode {
		p.addf(root, "the file must be a mapping of keys such as specialists and quorum, not a %s; the defaults apply", kindName(root))
		return cfg, p.sorted()
	}
	p.config(root, &cfg)
	return cfg, p.sorted()
}

type parser struct {
	name     string
	problems []problem
}

type problem struct {
	line int
	text string
}

func (p *parser) addf(n *yaml.Node, format string, args ...any) {
	p.problems = append(p.problems, problem{n.Line, fmt.Sprintf("%s line %d: %s.", p.name, n.Line, fmt.Sprintf(format, args...))})
}

// sorted returns the problems in the file's order.
func (p *parser) sorted() []string {
	slices.SortStableFunc(p.problems, func(a, b problem) int { return a.line - b.line })
	var out []string
	for _, pr := range p.problems {
		out = append(out, pr.text)
	}
	return out
}

// entries returns a mapping's values by key, in order, reporting unknown
// and repeated keys.
func (p *parser) entries(m *yaml.Node, where string, known ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := resolve(m.Content[i]), resolve(m.Content[i+1])
		key := k.Value
		full := where + key
		switch {
		case k.Kind != yaml.ScalarNode:
			p.addf(k, "a key in %s is not a name; it is ignored", orTop(where))
		case !slices.Contains(known, key):
			p.addf(k, "unknown key %q; it is ignored (known keys: %s)", full, strings.Join(known, ", "))
		case out[key] != nil:
			p.addf(k, "%s is given twice; the first is used", full)
		default:
			out[key] = v
		}
	}
	return out
}

func orTop(where string) string {
	if where == "" {
		return "the file"
	}
	return strings.TrimSuffix(where, ".")
}

func (p *parser) config(root *yaml.Node, cfg *Config) {
	e := p.entries(root, "", "version", "specialists", "quorum", "blocking_severity", "paths", "instructions", "max_findings", "rules")

	if n := e["version"]; n != nil && !isNull(n) {
		if v, ok := p.int(n, "version"); ok && v != Version {
			p.addf(n, "version %d is not supported (only version 1 is); the file is read as version 1", v)
		}
	}
	if n := e["specialists"]; n != nil && !isNull(n) {
		if v, ok := p.specialists(n); ok {
			cfg.Specialists = v
			cfg.Quorum = defaultQuorum(len(v))
		}
	}
	if n := e["quorum"]; n != nil && !isNull(n) {
		if v, ok := p.int(n, "quorum"); ok {
			switch {
			case v < 1:
				p.addf(n, "quorum is %d, but at least one specialist must succeed; the default, %d, is used", v, cfg.Quorum)
			case v > len(cfg.Specialists):
				p.addf(n, "quorum is %d, but only %d specialists are enabled; the default, %d, is used", v, len(cfg.Specialists), cfg.Quorum)
			default:
				cfg.Quorum = v
			}
		}
	}
	if n := e["blocking_severity"]; n != nil && !isNull(n) {
		if v, ok := p.str(n, "blocking_severity"); ok {
			if specialist.SeverityRank(v) < 0 {
				p.addf(n, "blocking_severity %q is not a severity (%s); the default, %s, is used", v, strings.Join(specialist.Severities, ", "), DefaultBlockingSeverity)
			} else {
				cfg.BlockingSeverity = v
			}
		}
	}
	if n := e["paths"]; n != nil && !isNull(n) {
		if n.Kind != yaml.MappingNode {
			p.addf(n, "paths must be a mapping with include and exclude, not a %s; every file is reviewed", kindName(n))
		} else {
			pe := p.entries(n, "paths.", "include", "exclude")
			if in := pe["include"]; in != nil && !isNull(in) {
				if v, ok := p.globs(in, "paths.include", "every file is included"); ok {
					cfg.Paths.Include = v
				}
			}
			if ex := pe["exclude"]; ex != nil && !isNull(ex) {
				if v, ok := p.globs(ex, "paths.exclude", "no file is excluded"); ok {
					cfg.Paths.Exclude = v
				}
			}
		}
	}
	if n := e["instructions"]; n != nil && !isNull(n) {
		cfg.Instructions = p.instructions(n)
	}
	if n := e["rules"]; n != nil && !isNull(n) {
		if n.Kind != yaml.MappingNode {
			p.addf(n, "rules must be a mapping with enable and disable, not a %s; the default rules run", kindName(n))
		} else {
			re := p.entries(n, "rules.", "enable", "disable")
			cfg.Rules.Enable = p.rules(re["enable"], "rules.enable")
			cfg.Rules.Disable = p.rules(re["disable"], "rules.disable")
		}
	}
	if n := e["max_findings"]; n != nil && !isNull(n) {
		if v, ok := p.int(n, "max_findings"); ok {
			if v < 1 {
				p.addf(n, "max_findings is %d, but must be at least 1; the default, %d, is used", v, DefaultMaxFindings)
			} else {
				cfg.MaxFindings = v
			}
		}
	}
}

func (p *parser) int(n *yaml.Node, key string) (int, bool) {
	var v int
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil {
		p.addf(n, "%s must be a whole number, not %s; the default is used", key, describe(n))
		return 0, false
	}
	return v, true
}

func (p *parser) str(n *yaml.Node, key string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		p.addf(n, "%s must be a string, not %s; the default is used", key, describe(n))
		return "", false
	}
	return n.Value, true
}

// strings decodes a sequence of strings; a single string is not accepted,
// so that a list is always written as one.
func (p *parser) stringList(n *yaml.Node, key, fallback string) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		p.addf(n, "%s must be a list, not %s; %s", key, describe(n), fallback)
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	for _, item := range n.Content {
		item = resolve(item)
		if item.Kind != yaml.ScalarNode || item.ShortTag() != "!!str" {
			p.addf(item, "%s must list strings, not %s; %s", key, describe(item), fallback)
			return nil, false
		}
		out = append(out, item.Value)
	}
	return out, true
}

func (p *parser) specialists(n *yaml.Node) ([]string, bool) {
	fallback := "the default, all of " + strings.Join(KnownSpecialists, ", ") + ", is used"
	names, ok := p.stringList(n, "specialists", fallback)
	if !ok {
		return nil, false
	}
	var out []string
	for i, name := range names {
		if !slices.Contains(KnownSpecialists, name) {
			p.addf(resolve(n.Content[i]), "specialists names %q, which is not a specialist (%s); %s", name, strings.Join(KnownSpecialists, ", "), fallback)
			return nil, false
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		p.addf(n, "specialists is empty, but at least one must be enabled; %s", fallback)
		return nil, false
	}
	return out, true
}

// rules reads a list of rule ids; an id that names no rule of the
// analyzers quorum runs is reported and left out, the others kept.
func (p *parser) rules(n *yaml.Node, key string) []string {
	if n == nil || isNull(n) {
		return nil
	}
	ids, ok := p.stringList(n, key, "none is used")
	if !ok {
		return nil
	}
	var out []string
	for i, id := range ids {
		if !polyglot.Known(id) {
			p.addf(resolve(n.Content[i]), "%s has %q, which is not a rule of ruff, oxlint, shellcheck or hadolint (written like ruff:S311, oxlint:eslint/no-debugger, shellcheck:SC2086, hadolint:DL3059); it is ignored", key, id)
			continue
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func (p *parser) globs(n *yaml.Node, key, fallback string) ([]string, bool) {
	globs, ok := p.stringList(n, key, fallback)
	if !ok {
		return nil, false
	}
	for i, g := range globs {
		item := resolve(n.Content[i])
		if msg := checkGlob(g); msg != "" {
			p.addf(item, "%s has %q, which %s; %s", key, g, msg, fallback)
			return nil, false
		}
	}
	return globs, true
}

// checkGlob says what is wrong with a glob, or "".
func checkGlob(g string) string {
	switch {
	case g == "":
		return "is empty"
	case strings.HasPrefix(g, "/"), strings.HasPrefix(g, "./"):
		return "would match nothing: paths are relative to the repository's root, without a leading / or ./"
	case strings.Contains(g, `\`):
		return "has a backslash: paths use forward slashes"
	case !doublestar.ValidatePattern(g):
		return "is not a valid glob"
	}
	return ""
}

// instructions keeps the valid entries; a wrong entry is dropped on its
// own, since an instruction cannot weaken a review and the others still
// say something useful.
func (p *parser) instructions(n *yaml.Node) []Instruction {
	if n.Kind != yaml.SequenceNode {
		p.addf(n, "instructions must be a list of {path, text}, not %s; it is ignored", describe(n))
		return nil
	}
	var out []Instruction
	for i, item := range n.Content {
		item = resolve(item)
		key := fmt.Sprintf("instructions[%d]", i)
		if item.Kind != yaml.MappingNode {
			p.addf(item, "%s must be a mapping with path and text, not %s; it is ignored", key, describe(item))
			continue
		}
		e := p.entries(item, key+".", "path", "text")
		pn, tn := e["path"], e["text"]
		if pn == nil || tn == nil {
			p.addf(item, "%s needs both path and text; it is ignored", key)
			continue
		}
		path, ok := p.entryString(pn, key+".path")
		if !ok {
			continue
		}
		text, ok := p.entryString(tn, key+".text")
		if !ok {
			continue
		}
		if msg := checkGlob(path); msg != "" {
			p.addf(pn, "%s.path %q %s; the instruction is ignored", key, path, msg)
			continue
		}
		if strings.TrimSpace(text) == "" {
			p.addf(tn, "%s.text is empty; the instruction is ignored", key)
			continue
		}
		out = append(out, Instruction{Path: path, Text: text})
	}
	return out
}

func (p *parser) entryString(n *yaml.Node, key string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		p.addf(n, "%s must be a string, not %s; the instruction is ignored", key, describe(n))
		return "", false
	}
	return n.Value, true
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	default:
		return "scalar"
	}
}

// describe names what a node is, for a problem: `"3" (a string)`, `a list`.
func describe(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return "a " + kindName(n)
	}
	kind := map[string]string{
		"!!str": "a string", "!!int": "a whole number", "!!float": "a number",
		"!!bool": "a boolean", "!!null": "null", "!!timestamp": "a date",
	}[n.ShortTag()]
	if kind == "" {
		kind = n.ShortTag()
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:40] + "…"
	}
	return fmt.Sprintf("%q (%s)", v, kind)
}
