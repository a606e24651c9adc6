package polyglot

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/quorum-review/quorum/internal/specialist"
)

// Rule is how quorum treats one analyzer rule: which specialist reports
// it, in which category, how severe, and whether it runs by default. The
// rules that run were chosen by what they find on real commits
// (docs/review-quality.md): a rule that mostly flags style, or correct
// code, is off; a repository may turn it on in .quorum.yaml.
type Rule struct {
	Specialist string
	Category   string
	Severity   string
	On         bool
	// keep, when set, decides each report of the rule by where it is:
	// its line (the instruction's lines for a Dockerfile), the code of its
	// function before it, the lines after it. For a rule that is worth
	// posting only in some places: where the value comes from another
	// party, where the command acts on files.
	keep func(s site) bool
}

func logic(sev string) Rule {
	return Rule{Specialist: specialist.Logic, Category: specialist.CategoryLogic, Severity: sev, On: true}
}

func security(sev string) Rule {
	return Rule{Specialist: specialist.Security, Category: specialist.CategorySecurity, Severity: sev, On: true}
}

func performance(sev string) Rule {
	return Rule{Specialist: specialist.Performance, Category: specialist.CategoryPerformance, Severity: sev, On: true}
}

func (r Rule) only(keep func(s site) bool) Rule { r.keep = keep; return r }

// off is a rule that runs only where a repository turns it on.
func (r Rule) off() Rule { r.On = false; return r }

const (
	high   = specialist.SeverityHigh
	medium = specialist.SeverityMedium
	low    = specialist.SeverityLow
)

// rules are the rules that run, by id ("ruff:S608"). A known rule not
// listed here is off (see family).
var rules = map[string]Rule{
	// Python, ruff's port of bandit: what lets input reach a shell, a
	// query, a deserializer, or turns off TLS checks. Off: asserts,
	// hard-coded passwords (the secrets scan's job), /tmp paths, random,
	// subprocess without a shell, XML parsers of the standard library,
	// mark_safe. MD5 and SHA-1 only where they hash a password or a
	// secret; pickle only where what it loads comes from another party.
	"ruff:S102": security(medium),       // exec
	"ruff:S103": security(medium),       // a file made world-writable
	"ruff:S113": security(low),          // an HTTP request that can hang forever
	"ruff:S201": security(medium),       // Flask's debugger on
	"ruff:S202": security(medium),       // tarfile.extractall of every member
	"ruff:S302": security(medium).off(), // marshal, off as pickle is
	"ruff:S306": security(medium),       // mktemp
	"ruff:S307": security(medium),       // eval
	"ruff:S323": security(high),         // an unverified SSL context
	"ruff:S501": security(high),         // verify=False
	"ruff:S502": security(high),
	"ruff:S503": security(high),
	"ruff:S504": security(high),
	"ruff:S505": security(medium), // a weak key
	"ruff:S506": security(high),   // yaml.load without a safe loader
	"ruff:S507": security(high),   // SSH without host key checks
	"ruff:S508": security(medium),
	"ruff:S509": security(medium),
	"ruff:S601": security(high), // a shell command through paramiko
	// subprocess with shell=True, and os.system, only where the command
	// is not a constant: ruff says "seems safe" of a constant one.
	"ruff:S602": security(high).only(notSafe),
	"ruff:S605": security(high).only(notSafe),
	"ruff:S608": security(medium).only(runsQuery), // SQL built from strings
	// pickle, where what it loads comes from a request, a socket, the
	// command line or the environment: most uses load a file the program
	// wrote itself, a cache.
	"ruff:S301": security(high).only(fromUntrusted),
	// MD5 and SHA-1 of a password or a secret: most uses are checksums,
	// cache keys and the signatures a web API asks for.
	"ruff:S324": security(high).only(hashesASecret),
	"ruff:S609": security(medium),
	"ruff:S610": security(medium),
	"ruff:S611": security(medium),
	"ruff:S612": security(medium),
	"ruff:S701": security(medium), // jinja2 without autoescape
	"ruff:S702": security(medium),

	// Python correctness: pyflakes' errors (not its unused imports and
	// variables), bugbear's bugs (not its opinions), pylint's errors.
	"ruff:F402": logic(medium), // an import shadowed by a loop variable
	"ruff:F501": logic(medium), "ruff:F502": logic(medium), "ruff:F503": logic(medium), "ruff:F504": logic(medium),
	"ruff:F505": logic(medium), "ruff:F506": logic(medium), "ruff:F507": logic(medium), "ruff:F508": logic(medium),
	"ruff:F509": logic(medium), "ruff:F521": logic(medium), "ruff:F522": logic(medium), "ruff:F523": logic(medium),
	"ruff:F524": logic(medium), "ruff:F525": logic(medium),
	"ruff:F601": logic(medium), "ruff:F602": logic(medium), // a dict key given twice
	"ruff:F631": logic(high),   // assert on a tuple: always true
	"ruff:F632": logic(medium), // is with a literal
	"ruff:F633": logic(medium),
	"ruff:F634": logic(high), // if on a tuple: always true
	"ruff:F701": logic(high), "ruff:F702": logic(high), "ruff:F704": logic(high), "ruff:F706": logic(high), "ruff:F707": logic(high),
	"ruff:F811": logic(medium), // a definition that silently replaces another
	"ruff:F821": logic(high),   // an undefined name
	"ruff:F822": logic(medium),
	"ruff:F823": logic(high), // a local read before it is assigned
	"ruff:F901": logic(medium),
	"ruff:B002": logic(high),   // ++x is not an increment
	"ruff:B003": logic(high),   // os.environ replaced, not updated
	"ruff:B005": logic(medium), // strip("abc") strips characters
	"ruff:B006": logic(medium), // a mutable default argument
	"ruff:B012": logic(high),   // return in finally swallows the exception
	"ruff:B015": logic(medium), // a comparison whose result is dropped
	"ruff:B016": logic(medium),
	"ruff:B019": performance(medium), // lru_cache on a method keeps every self
	"ruff:B020": logic(high),         // the loop variable overwrites the iterable
	"ruff:B023": logic(medium),       // a closure over the loop variable
	"ruff:B025": logic(medium),
	"ruff:B029": logic(high), "ruff:B030": logic(high),
	"ruff:B031": logic(medium), "ruff:B032": logic(medium), "ruff:B033": logic(medium), "ruff:B034": logic(medium),
	"ruff:B035": logic(medium), "ruff:B039": logic(medium),
	"ruff:PLE2502": security(high), // bidirectional control characters (Trojan Source)
	// Blocking calls in async functions stall the event loop.
	"ruff:ASYNC210": performance(medium), "ruff:ASYNC212": performance(medium),
	"ruff:ASYNC220": performance(medium), "ruff:ASYNC221": performance(medium), "ruff:ASYNC222": performance(medium),
	"ruff:ASYNC251": performance(medium),

	// JavaScript and TypeScript, oxlint: code that is wrong whatever the
	// intent. Off: unused variables and expressions, constant conditions
	// (while (true)), useless escapes: style, or deliberate far more often
	// than not. An assignment as a condition (if (x = y)) is reported
	// outside the double parentheses that say it is meant.
	"oxlint:eslint/no-unsafe-finally":                       logic(high),
	"oxlint:eslint/for-direction":                           logic(high),
	"oxlint:eslint/no-const-assign":                         logic(high),
	"oxlint:eslint/no-import-assign":                        logic(high),
	"oxlint:eslint/no-this-before-super":                    logic(high),
	"oxlint:eslint/no-unsafe-optional-chaining":             logic(high),
	"oxlint:eslint/no-unsafe-negation":                      logic(high),
	"oxlint:eslint/no-obj-calls":                            logic(high),
	"oxlint:eslint/no-new-native-nonconstructor":            logic(high),
	"oxlint:eslint/use-isnan":                               logic(high),
	"oxlint:eslint/valid-typeof":                            logic(high),
	"oxlint:eslint/no-dupe-class-members":                   logic(high),
	"oxlint:eslint/no-duplicate-case":                       logic(high),
	"oxlint:eslint/no-dupe-else-if":                         logic(high),
	"oxlint:eslint/no-constant-binary-expression":           logic(high),
	"oxlint:eslint/no-invalid-regexp":                       logic(high),
	"oxlint:eslint/no-self-compare":                         logic(medium),
	"oxlint:eslint/no-dupe-keys":                            logic(medium),
	"oxlint:eslint/no-compare-neg-zero":                     logic(medium),
	"oxlint:eslint/no-func-assign":                          logic(medium),
	"oxlint:eslint/no-class-assign":                         logic(medium),
	"oxlint:eslint/no-ex-assign":                            logic(medium),
	"oxlint:eslint/no-setter-return":                        logic(medium),
	"oxlint:eslint/getter-return":                           logic(medium),
	"oxlint:eslint/no-async-promise-executor":               logic(medium),
	"oxlint:eslint/no-loss-of-precision":                    logic(medium),
	"oxlint:eslint/no-self-assign":                          logic(medium),
	"oxlint:eslint/no-global-assign":                        logic(medium),
	"oxlint:eslint/no-shadow-restricted-names":              logic(medium),
	"oxlint:eslint/no-empty-character-class":                logic(medium),
	"oxlint:eslint/no-debugger":                             logic(low),
	"oxlint:eslint/no-cond-assign":                          logic(high).only(assignsAValue),
	"oxlint:eslint/no-eval":                                 security(medium),
	"oxlint:eslint/no-new-func":                             security(medium),
	"oxlint:oxc/bad-comparison-sequence":                    logic(high),
	"oxlint:oxc/const-comparisons":                          logic(high),
	"oxlint:oxc/bad-char-at-comparison":                     logic(high),
	"oxlint:oxc/bad-min-max-func":                           logic(high),
	"oxlint:oxc/bad-object-literal-comparison":              logic(high),
	"oxlint:oxc/bad-replace-all-arg":                        logic(high),
	"oxlint:oxc/missing-throw":                              logic(high),
	"oxlint:oxc/uninvoked-array-callback":                   logic(high),
	"oxlint:oxc/erasing-op":                                 logic(medium),
	"oxlint:oxc/bad-array-method-on-arguments":              logic(medium),
	"oxlint:oxc/number-arg-out-of-range":                    logic(medium),
	"oxlint:oxc/misrefactored-assign-op":                    logic(medium),
	"oxlint:oxc/bad-bitwise-operator":                       logic(medium),
	"oxlint:oxc/no-accumulating-spread":                     performance(medium),
	"oxlint:typescript/no-duplicate-enum-values":            logic(high),
	"oxlint:typescript/no-misused-new":                      logic(medium),
	"oxlint:typescript/no-unsafe-declaration-merging":       logic(medium),
	"oxlint:typescript/no-non-null-asserted-optional-chain": logic(medium),
	"oxlint:unicorn/no-invalid-remove-event-listener":       logic(high),
	"oxlint:unicorn/no-invalid-fetch-options":               logic(high),
	"oxlint:unicorn/no-await-in-promise-methods":            logic(medium),
	"oxlint:react/jsx-key":                                  logic(medium),
	"oxlint:react/jsx-no-duplicate-props":                   logic(medium),
	"oxlint:react/no-direct-mutation-state":                 logic(medium),
	"oxlint:react/no-danger-with-children":                  logic(high),
	// dangerouslySetInnerHTML of a value that is neither a literal nor
	// sanitized: cross-site scripting.
	"oxlint:react/no-danger": security(high).only(injectsHTML),
	// The type-aware rules (oxlint-tsgolint): a promise nobody awaits, an
	// async callback where a void one is expected (forEach), await of
	// what is not a promise, for-in over an array, delete of an index.
	"oxlint:typescript/no-floating-promises":     logic(medium).only(floats),
	"oxlint:typescript/no-misused-promises":      logic(medium).only(promiseLost),
	"oxlint:typescript/await-thenable":           logic(medium).only(typed),
	"oxlint:typescript/no-for-in-array":          logic(medium),
	"oxlint:typescript/no-array-delete":          logic(medium),
	"oxlint:react/void-dom-elements-no-children": logic(medium),

	// Shell, shellcheck: what breaks on a path with a space, a failed
	// cd, a glob, an empty variable. Off: style (backticks, $? checks),
	// unused and unassigned variables (set elsewhere, by the caller),
	// unreachable code (functions called from traps), printf formats.
	"shellcheck:SC2086": logic(medium).only(splitsAPath), // an unquoted variable split into words
	"shellcheck:SC2046": logic(medium).only(splitsFiles), // an unquoted $(…)
	"shellcheck:SC2115": security(high),                  // rm -rf "$dir/" with dir empty is rm -rf /
	"shellcheck:SC2114": security(high),                  // rm -rf /usr /lib/x: a stray space deletes a system directory
	"shellcheck:SC2156": security(high),                  // find -exec sh -c with {} injected
	"shellcheck:SC2164": logic(medium),                   // cd that can fail, and the script goes on
	// $* and $@ unquoted, where the words become a command's arguments
	// (not a message's).
	"shellcheck:SC2048": logic(medium).only(notMessage), "shellcheck:SC2068": logic(medium).only(notMessage),
	"shellcheck:SC2045": logic(medium), "shellcheck:SC2038": logic(medium),
	"shellcheck:SC2064": logic(medium), "shellcheck:SC2069": logic(medium),
	"shellcheck:SC2066": logic(medium), "shellcheck:SC2067": logic(medium), "shellcheck:SC2070": logic(medium),
	"shellcheck:SC2071": logic(high), "shellcheck:SC2072": logic(high),
	"shellcheck:SC2076": logic(medium), "shellcheck:SC2088": logic(medium),
	"shellcheck:SC2091": logic(medium), "shellcheck:SC2092": logic(medium),
	"shellcheck:SC2094": logic(high), "shellcheck:SC2095": logic(medium),
	"shellcheck:SC2097": logic(medium), "shellcheck:SC2098": logic(medium),
	"shellcheck:SC2104": logic(high), "shellcheck:SC2105": logic(high),
	"shellcheck:SC2157": logic(medium),
	"shellcheck:SC2168": logic(high),
	"shellcheck:SC2193": logic(high), "shellcheck:SC2194": logic(medium), "shellcheck:SC2195": logic(high),
	"shellcheck:SC2199": logic(medium), "shellcheck:SC2203": logic(medium),
	"shellcheck:SC2210": logic(medium), "shellcheck:SC2211": logic(medium),
	"shellcheck:SC2216": logic(medium), "shellcheck:SC2217": logic(medium),
	"shellcheck:SC2218": logic(high), "shellcheck:SC2219": logic(medium),
	"shellcheck:SC2221": logic(medium), "shellcheck:SC2222": logic(medium),
	"shellcheck:SC2242": logic(medium), "shellcheck:SC2251": logic(medium),
	"shellcheck:SC2261": logic(medium), "shellcheck:SC2264": logic(high),
	"shellcheck:SC2283": logic(medium), "shellcheck:SC2284": logic(medium),

	// Dockerfiles, hadolint. Off: style and layer hygiene (WORKDIR over
	// cd, one RUN, ADD, apt-get flags), MAINTAINER.
	"hadolint:DL3002": security(medium), // the last USER is root
	"hadolint:DL3004": security(medium), // sudo in a build
	"hadolint:DL3007": security(low),    // the latest tag
	// Off, measured as noise on real commits: an image without a tag
	// (DL3006: the images a repository builds for its own tests), and
	// system packages without a pinned version (DL3008, DL3018: the
	// official images deliberately do not pin them, since a distribution
	// drops old versions and the pinned build breaks). On with .quorum.yaml.
	"hadolint:DL3006": security(low).off(), "hadolint:DL3008": security(low).off(), "hadolint:DL3018": security(low).off(),
	"hadolint:DL3013": security(low), "hadolint:DL3016": security(low), "hadolint:DL3028": security(low), // pip, npm and gem packages without a version
	"hadolint:DL3000": logic(low),                  // WORKDIR must be absolute
	"hadolint:DL3014": logic(medium).only(prompts), // apt-get install without -y: the build stops at the prompt
	// "Do not use apt": style, except where the apt asks (apt install
	// without -y), which hadolint says only as DL3014 of apt-get.
	"hadolint:DL3027": logic(medium).only(prompts),
	// ADD of the whole build context (ADD . /src), where COPY says what
	// is meant: ADD also fetches URLs and unpacks archives, so a reader
	// must check which it does. Low: the image is the same.
	"hadolint:DL3020": logic(low).only(addsTheContext),
	"hadolint:DL3021": logic(high), // COPY of several files to a non-directory
	"hadolint:DL3022": logic(medium),
	"hadolint:DL3023": logic(high),
	"hadolint:DL3024": logic(high),
	"hadolint:DL3043": logic(high),
	"hadolint:DL3044": logic(medium),
	"hadolint:DL4003": logic(medium), "hadolint:DL4004": logic(medium),
	// A pipe hides the failure of all but its last command: worth a
	// comment where what fails is a download, a build, an install or a
	// script (curl … | sh, make | tee log), not an echo into sha256sum.
	"hadolint:DL4006": security(medium).only(failureHidden),
}

// reRunsQuery matches a line that hands SQL to a database: a DB-API or
// ORM call, or a variable named for a query.
var reRunsQuery = regexp.MustCompile(`(?i)\.(execute|executemany|executescript|raw|extra|mogrify|query)\s*\(|\b(text|read_sql\w*)\s*\(|^\s*(self\.)?\w*(sql|query|stmt|statement)\w*\s*\+?=[^=]`)

// rePlaceholders matches the list of placeholders built for an IN clause,
// ",".join(["?"] * len(ids)): the values are still bound.
var rePlaceholders = regexp.MustCompile(`join\(\s*\[\s*("\?"|'\?'|"%s"|'%s')\s*\]\s*\*|join\(\s*("\?"|'\?'|"%s"|'%s')\s+for\b`)

// runsQuery keeps S608 where the SQL built from strings is run or kept as
// a query: not where the string is a message, a log line, or a payload a
// security tool sends (sqlmap builds SQL with % by design).
func runsQuery(s site) bool {
	if rePlaceholders.MatchString(s.line) {
		return false
	}
	for _, l := range strings.Split(s.line, "\n") {
		if reRunsQuery.MatchString(l) {
			return true
		}
	}
	return false
}

// notSafe keeps ruff's shell reports that are not of a constant command.
func notSafe(s site) bool { return !strings.Contains(s.message, "seems safe") }

// actsOnFiles matches a command line that deletes, moves, copies, changes,
// resolves (readlink -f, dirname), packs,
// runs or evaluates what a variable names: where word splitting and
// globbing of an unquoted variable does damage.
var reActsOnFiles = regexp.MustCompile(`(^|[\s;&|(\x60])(rm|mv|cp|ln|chmod|chown|chgrp|rsync|tar|unzip|find|xargs|eval|exec|source|\.|ssh|scp|sudo|docker|kubectl|dd|mkdir|rmdir|touch|install|cat|sed|grep|zip|readlink|realpath|dirname|basename|mount|umount|mkisofs|genisoimage|xorriso)\s`)

func actsOnFiles(s site) bool { return reActsOnFiles.MatchString(s.line) }

// reOneWord matches a command substitution whose output is one word
// without spaces or glob characters: a program's path from command -v or
// which, a number, a machine's name or architecture.
var reOneWord = regexp.MustCompile(`^\$\(\s*(command\s+-v|which|type\s+-[pP]|nproc|id\s+-[ug]|uname|arch|getconf|hostname|dpkg\s+--print-architecture)\b[^|;&$()]*\)$`)

// splitsFiles keeps SC2046 (an unquoted $(…)) on a line that acts on
// files, unless what it expands to is one word by construction
// (readlink -f $(command -v iptables)).
func splitsFiles(s site) bool { return actsOnFiles(s) && !reOneWord.MatchString(s.subject) }

// rePathVar matches the expansion of a variable named for a path, or of a
// positional parameter: values that hold spaces and glob characters in real
// use (a home directory, a user's file name), where an image name, a
// number or a flag list does not.
var rePathVar = regexp.MustCompile(`\$(\{#?)?([0-9]\b|[A-Za-z_0-9]*(?i:dir|path|file|home|root|dest|src|source|target|tmp|temp|prefix|script|folder|cwd|pwd|out|log|cache|config|conf|workspace|base)[A-Za-z_0-9]*)`)

// reRuns matches a line that evaluates or runs what it expands.
var reRuns = regexp.MustCompile(`(^|[;&|(])\s*(eval|exec|source|\.)\s`)

// reRemoves matches a command that deletes: whatever its unquoted
// variable holds, split or empty, it deletes something else.
var reRemoves = regexp.MustCompile(`(^|[;&|(]|\bthen|\bdo|\belse)\s*(sudo\s+)?(rm|rmdir|unlink|shred)\s`)

// reStringTest matches a single-bracket test of a string or a file whose
// operand is an unquoted variable: [ $x = y ], [ -n $x ], [ -f $file ].
// Empty, the variable changes the test's answer ([ -n ] and [ -f ] are
// true) or breaks it ([ = y ] is an error); with a space, it is two words.
// Not [ -z $x ], which empty is still true, nor numeric tests
// ([ $n -gt 0 ]), whose values are numbers.
var reStringTest = regexp.MustCompile(`(^|[\s;&|(!])(\[|test)\s+(!\s+)?(-[nfdeLrwxsh]\s+\$\{?\w|\$\{?\w+\}?\s+(=|==|!=)\s|[^\]]*\s(=|==|!=)\s+\$\{?\w+\}?\s*(\]|-a|-o))`)

// splitsAPath keeps SC2086 where the unquoted variable is a path (or a
// script's argument) given to a command that acts on files, any variable
// given to rm, a variable a string test compares, or where the line
// evaluates what it expands: `rm -rf $dir/cache`, `rm -rf $NAME/`,
// `[ -n $version ]`, `source $script`; not `docker pull $IMAGE` or
// `mkfs -b $SIZE`.
func splitsAPath(s site) bool {
	if strings.Contains(s.line, "<<<") {
		// A here-string is not split into words (bash 4.4 and later).
		return false
	}
	return reRuns.MatchString(s.line) || reRemoves.MatchString(s.line) || reStringTest.MatchString(s.line) ||
		actsOnFiles(s) && rePathVar.MatchString(s.line) && !reMessage.MatchString(s.line)
}

// reMessage matches a line that prints a message: where splitting $@
// into words changes nothing but spacing.
var reMessage = regexp.MustCompile(`^\s*(echo|printf|print|log\w*|warn\w*|info|error|die|fail\w*|flunk|abort|msg|note)\b`)

func notMessage(s site) bool { return !reMessage.MatchString(s.line) }

// rePipe finds each pipe of a RUN instruction with the command before it:
// the command's first word after the start of the instruction or of its
// list (&&, ;, a subshell, $(, then, do).
var rePipe = regexp.MustCompile(`(?:^|&&|;|\(|\$\(|\|\||\bthen\b|\bdo\b)(?:\s|\\\n)*(?:sudo\s+|env\s+(?:\w+=\S*\s+)*|\w+=\S*\s+)*([^\s|;&()\\]+)[^|;&()]*\|[^|]`)

// reFailing matches a command whose failure must stop a build: a
// download, a build, an install, a script, a signature check, and the
// commands whose output becomes the image's contents (scanelf's list of
// the libraries to keep, an archive's files).
var reFailing = regexp.MustCompile(`^(?:curl|wget|make|cmake|ninja|npm|npx|yarn|pnpm|pip3?|python3?|go|cargo|mvn|gradle|\./gradlew|apt-get|apt|apk|dnf|yum|gem|composer|bundle|gpg|git|sh|bash|scanelf|ldd|find|tar|unzip|gunzip|zcat|xz|jq|\./\S+|/\S+\.sh)$`)

// failureHidden keeps DL4006 (a pipe without pipefail) where the command
// whose failure the pipe hides is a download, a build, an install or a
// script: the build goes on with its output missing (curl … | sh, make |
// tee build.log). An echo into sha256sum -c, dpkg --print-architecture
// into awk cannot fail in a way that matters.
func failureHidden(s site) bool {
	run := strings.TrimPrefix(strings.TrimSpace(s.line), "RUN ")
	for _, m := range rePipe.FindAllStringSubmatch(run, -1) {
		if reFailing.MatchString(m[1]) {
			return true
		}
	}
	return false
}

// reAptAsks matches an apt or apt-get command that asks before it changes
// the system, and reAptYes the flags that answer for it (-qq implies -y).
var (
	reAptAsks = regexp.MustCompile(`\bapt(-get)?\s+(?:-\S+\s+)*(install|remove|purge|upgrade|dist-upgrade|full-upgrade|autoremove)\b`)
	reAptYes  = regexp.MustCompile(`(^|\s)(-[a-zA-Z]*y[a-zA-Z]*|-qq|-q=?2|--quiet=2|--yes|--assume-yes|--force-yes)\b`)
)

// prompts keeps DL3014 and DL3027 where an apt-get or apt that asks
// (install, remove, upgrade) has no -y: the build stops at its question.
// hadolint also says DL3014 of apt-get source --compile, which asks
// nothing, and DL3027 of every apt.
func prompts(s site) bool {
	for _, c := range reCommandSep.Split(strings.ReplaceAll(s.line, "\\\n", " "), -1) {
		if reAptAsks.MatchString(c) && !reAptYes.MatchString(c) {
			return true
		}
	}
	return false
}

// reAddContext matches an ADD of the whole build context.
var reAddContext = regexp.MustCompile(`(?i)^\s*ADD\s+(--\S+\s+)*\.\/?\s`)

// addsTheContext keeps DL3020 (ADD where COPY would do) for an ADD of the
// whole build context: the fixes of real repositories (Dockerfile smell
// DL3020) were of that; an ADD of one file or directory is left alone
// (dalibo/pandocker's eleven, docs/languages.md).
func addsTheContext(s site) bool { return reAddContext.MatchString(s.line) }

// reCommandSep separates the commands of a shell line.
var reCommandSep = regexp.MustCompile(`&&|\|\||;|\|`)

// family is the rule of a known rule the table does not list: off, with
// the specialist of its kind.
func family(id string) (Rule, bool) {
	tool, code, ok := strings.Cut(id, ":")
	if !ok {
		return Rule{}, false
	}
	var r Rule
	switch tool {
	case "ruff":
		m := reRuffCode.FindStringSubmatch(code)
		if m == nil {
			return Rule{}, false
		}
		switch m[1] {
		case "S":
			r = security(medium)
		case "ASYNC", "PERF":
			r = performance(low)
		default:
			r = logic(medium)
		}
		if m[1] == "PLE" {
			// pylint's errors: each is a bug.
			return r, true
		}
	case "oxlint":
		if !reOxlintCode.MatchString(code) {
			return Rule{}, false
		}
		r = logic(medium)
	case "shellcheck":
		if !reShellcheckCode.MatchString(code) {
			return Rule{}, false
		}
		r = logic(medium)
	case "hadolint":
		if !reHadolintCode.MatchString(code) && !reShellcheckCode.MatchString(code) {
			return Rule{}, false
		}
		r = logic(low)
	default:
		return Rule{}, false
	}
	r.On = false
	return r, true
}

var (
	reRuffCode       = regexp.MustCompile(`^(S|F|B|PLE|ASYNC|PERF)\d{3,4}$`)
	reOxlintCode     = regexp.MustCompile(`^(eslint|typescript|unicorn|oxc|react|react-perf|import|jsdoc|jest|vitest|jsx-a11y|nextjs|promise|node|vue)/[a-z0-9-]+$`)
	reShellcheckCode = regexp.MustCompile(`^SC\d{4}$`)
	reHadolintCode   = regexp.MustCompile(`^DL\d{4}$`)
)

// Known reports whether id names a rule of an analyzer quorum runs, as a
// repository's .quorum.yaml may turn on or off: "ruff:S311",
// "shellcheck:SC2086", "oxlint:eslint/no-unused-vars", "hadolint:DL3059".
func Known(id string) bool {
	if _, ok := rules[id]; ok {
		return true
	}
	_, ok := family(id)
	return ok
}

// lookup returns the rule of id, and whether it is known.
func lookup(id string) (Rule, bool) {
	if r, ok := rules[id]; ok {
		return r, true
	}
	return family(id)
}

// on reports whether the rule with id runs under a repository's choice
// (.quorum.yaml's rules): Disable wins over Enable and the default, and a
// refused rule never runs.
func on(rs specialist.Rules, id string, r Rule) bool {
	if slices.Contains(rs.Disable, id) || refused(id) != "" {
		return false
	}
	return r.On || slices.Contains(rs.Enable, id)
}

// fileLocalImportRules are the rules of oxlint's import plugin that decide
// by the file alone. The others (named, namespace, default, export,
// no-cycle, no-duplicates, no-self-import, no-named-as-default, …) resolve
// what an import names and report on that file's content: an import of
// "/etc/x.js" or "../../../x.js" would make their findings tell what
// exists outside the change's files.
var fileLocalImportRules = []string{
	"consistent-type-specifier-style", "exports-last", "first", "group-exports", "max-dependencies",
	"newline-after-import", "no-absolute-path", "no-amd", "no-anonymous-default-export", "no-commonjs",
	"no-default-export", "no-dynamic-require", "no-empty-named-blocks", "no-mutable-exports",
	"no-named-default", "no-named-export", "no-namespace", "no-nodejs-modules",
	"no-relative-parent-imports", "no-unassigned-import", "no-webpack-loader-syntax",
	"prefer-default-export", "unambiguous",
}

// refused says why quorum does not run the rule with id even where a
// repository turns it on, or "".
func refused(id string) string {
	name, ok := strings.CutPrefix(id, "oxlint:import/")
	if !ok || slices.Contains(fileLocalImportRules, name) {
		return ""
	}
	return "it resolves the files an import names, wherever they are, and its findings would tell what exists outside the change's files"
}

// noteRefused tells the review which rules the repository turned on that
// quorum refuses to run, each by the specialist it belongs to.
func noteRefused(ctx context.Context, name string, rs specialist.Rules) {
	for _, id := range rs.Enable {
		if why := refused(id); why != "" && !slices.Contains(rs.Disable, id) {
			if r, ok := lookup(id); ok && r.Specialist == name {
				specialist.Note(ctx, ".quorum.yaml turns on %s, which quorum does not run: %s.", id, why)
			}
		}
	}
}
