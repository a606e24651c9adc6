package change

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ErrInvalidRef is returned for a revision that is malformed or names no
// commit.
var ErrInvalidRef = errors.New("invalid revision")

// Defaults for Local's limits.
const (
	DefaultMaxFileSize = 4 << 20
	DefaultMaxDiffSize = 64 << 20
	DefaultGitTimeout  = time.Minute
)

// binarySniffLen is how much of a file git itself looks at for a NUL byte
// to decide that it is binary.
const binarySniffLen = 8000

// defaultBranches are tried in this order for the default base: the
// remote's default branch, then the usual local names, then the usual
// remote-tracking names (a CI clone may have no local branch but its own).
var defaultBranches = []string{
	"refs/remotes/origin/HEAD",
	"refs/heads/main",
	"refs/heads/master",
	"refs/remotes/origin/main",
	"refs/remotes/origin/master",
}

// Local is a Source over a git repository on disk, read with the git CLI.
//
// The repository is treated as untrusted: git runs without a shell, with
// no system or global configuration, with hooks, fsmonitor, external diff
// drivers, textconv filters, replace refs, pagers and network transports
// off, and only reads objects (rev-parse, merge-base, diff of two commits,
// cat-file), so nothing from the repository is checked out or run. It
// does not set safe.directory: a repository owned by another user is
// refused by git, as it should be; quorum's own clones are owned by quorum.
type Local struct {
	// Dir is the repository's work tree or git directory (a subdirectory
	// works too, as with git); empty is the current directory.
	Dir string
	// Git is the git executable; "git" (found on PATH) when empty.
	Git string
	// MaxFileSize bounds ReadFileAt; DefaultMaxFileSize when 0.
	MaxFileSize int64
	// MaxDiffSize bounds the diff of a change; DefaultMaxDiffSize when 0.
	MaxDiffSize int64
	// GitTimeout bounds each git command, within ctx's own deadline;
	// DefaultGitTimeout when 0.
	GitTimeout time.Duration

	// batch serves file reads from one git process.
	batch catFile
	// env is added to git's environment (Uncommitted's object directory).
	env []string
}

var (
	_ Source = (*Local)(nil)
	_ Tree   = (*Local)(nil)
)

// NewLocal returns a Local source over the repository at dir.
func NewLocal(dir string) *Local {
	return &Local{Dir: dir}
}

// Change builds the change ref names. An empty ref.Head is HEAD; an empty
// ref.Base is the merge-base of the head with the default branch, the first
// of origin/HEAD, main, master, origin/main and origin/master that exists.
func (l *Local) Change(ctx context.Context, ref Ref) (*Change, error) {
	head := ref.Head
	if head == "" {
		head = "HEAD"
	}
	headSHA, err := l.resolve(ctx, head)
	if err != nil {
		return nil, err
	}
	var baseSHA string
	if ref.Base != "" {
		if baseSHA, err = l.resolve(ctx, ref.Base); err != nil {
			return nil, err
		}
	} else if baseSHA, err = l.defaultBase(ctx, headSHA); err != nil {
		return nil, err
	}

	files, err := l.diff(ctx, baseSHA, headSHA, false, nil)
	if err != nil {
		return nil, err
	}
	if files, err = l.textDiffs(ctx, baseSHA, headSHA, files); err != nil {
		return nil, err
	}
	return New(ctx, ref, baseSHA, headSHA, files, l)
}

// ReadFileAt returns the contents of path at rev, from git's object
// database (never the work tree). A symbolic link reads as its target's
// name; a directory or a submodule is an error.
func (l *Local) ReadFileAt(ctx context.Context, rev, path string) ([]byte, error) {
	if err := checkRev(rev); err != nil {
		return nil, err
	}
	if !fs.ValidPath(path) || strings.ContainsAny(path, "\n\x00") {
		return nil, fmt.Errorf("read %q at %s: invalid path", path, rev)
	}
	data, err := l.readBlob(ctx, rev, path, l.maxFileSize(), false)
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", path, short(rev), err)
	}
	return data, nil
}

// ListFiles lists the files (not directories or submodules) directly in dir
// at rev, from git's object database.
func (l *Local) ListFiles(ctx context.Context, rev, dir string) ([]string, error) {
	return l.lsTree(ctx, rev, dir, false)
}

// ListTree lists every file at rev, recursively, from git's object database.
func (l *Local) ListTree(ctx context.Context, rev string) ([]string, error) {
	return l.lsTree(ctx, rev, "", true)
}

func (l *Local) lsTree(ctx context.Context, rev, dir string, recursive bool) ([]string, error) {
	if err := checkRev(rev); err != nil {
		return nil, err
	}
	dir = strings.TrimSuffix(dir, "/")
	if dir != "" && (!fs.ValidPath(dir) || strings.ContainsAny(dir, "\n\x00")) {
		return nil, fmt.Errorf("list %q at %s: invalid path", dir, rev)
	}
	treeish := rev + "^{tree}"
	if dir != "" {
		treeish = rev + ":" + dir
	}
	// -z keeps paths verbatim; checkRev refused option-like revisions.
	args := []string{"ls-tree", "-z", "--full-tree"}
	if recursive {
		args = append(args, "-r")
	}
	out, err := l.run(ctx, l.maxDiffSize(), append(args, treeish)...)
	if err != nil {
		if strings.Contains(err.Error(), "Not a valid object name") || strings.Contains(err.Error(), "not a tree object") {
			return nil, fmt.Errorf("list %s at %s: %w", dir, short(rev), fs.ErrNotExist)
		}
		return nil, fmt.Errorf("list %s at %s: %w", dir, short(rev), err)
	}
	var files []string
	for _, entry := range strings.Split(string(out), "\x00") {
		// "<mode> SP <type> SP <object> TAB <name>"
		meta, name, ok := strings.Cut(entry, "\t")
		if !ok || !strings.Contains(meta, " blob ") {
			continue
		}
		if dir != "" {
			name = dir + "/" + name
		}
		files = append(files, name)
	}
	return files, nil
}

var _ Lister = (*Local)(nil)

// diff runs and parses the diff of base to head, as text when text is
// set, limited to paths when there are any.
func (l *Local) diff(ctx context.Context, base, head string, text bool, paths []string) ([]*File, error) {
	out, err := l.run(ctx, l.maxDiffSize(), diffArgs(base, head, text, paths)...)
	if err != nil {
		return nil, fmt.Errorf("diff %s..%s: %w", short(base), short(head), err)
	}
	return ParseDiff(bytes.NewReader(out))
}

// diffArgs is the one diff command: fixed output format whatever the
// repository's configuration says (prefixes, context, algorithm, order,
// submodule format), no external programs, renames found, full object
// names. Three lines of context, as GitHub shows: a platform takes inline
// comments only on lines its own diff shows, so a hunk here is exactly a
// commentable range there. Specialists wanting more context read the file.
func diffArgs(base, head string, text bool, paths []string) []string {
	args := []string{
		"diff", "--no-color", "--no-ext-diff", "--no-textconv",
		"--no-relative", "--full-index", "-M", "--unified=3",
		"--inter-hunk-context=0", "--diff-algorithm=myers",
		"--src-prefix=a/", "--dst-prefix=b/", "--submodule=short",
		"-O" + os.DevNull,
	}
	if text {
		args = append(args, "--text")
	}
	args = append(args, base, head)
	if len(paths) > 0 {
		args = append(args, "--")
		args = append(args, paths...)
	}
	return args
}

// textDiffs re-diffs as text the files git called binary whose contents
// hold no NUL byte: they were made "binary" by an attribute (-diff, or a
// diff driver with binary set) that the change itself may have written to
// .gitattributes to hide code from review.
func (l *Local) textDiffs(ctx context.Context, base, head string, files []*File) ([]*File, error) {
	var paths []string
	redo := map[[2]string]bool{}
	for _, f := range files {
		if !f.Binary || f.NewMode&0o170000 == 0o160000 || f.OldMode&0o170000 == 0o160000 {
			continue
		}
		text := true
		for _, side := range [][2]string{{base, f.OldPath}, {head, f.NewPath}} {
			if side[1] == "" {
				continue
			}
			data, err := l.readBlob(ctx, side[0], side[1], binarySniffLen, true)
			if err != nil {
				return nil, fmt.Errorf("read %s at %s: %w", side[1], short(side[0]), err)
			}
			if bytes.IndexByte(data, 0) >= 0 {
				text = false
			}
		}
		if !text {
			continue
		}
		redo[[2]string{f.OldPath, f.NewPath}] = true
		for _, p := range []string{f.OldPath, f.NewPath} {
			if p != "" {
				paths = append(paths, ":(literal)"+p)
			}
		}
	}
	if len(paths) == 0 {
		return files, nil
	}
	again, err := l.diff(ctx, base, head, true, paths)
	if err != nil {
		return nil, err
	}
	byPaths := map[[2]string]*File{}
	for _, f := range again {
		byPaths[[2]string{f.OldPath, f.NewPath}] = f
	}
	for i, f := range files {
		key := [2]string{f.OldPath, f.NewPath}
		if g := byPaths[key]; redo[key] && g != nil {
			files[i] = g
		}
	}
	return files, nil
}

// resolve returns the full object name of the commit rev names.
func (l *Local) resolve(ctx context.Context, rev string) (string, error) {
	if err := checkRev(rev); err != nil {
		return "", err
	}
	out, err := l.run(ctx, 4096, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 1 {
			return "", fmt.Errorf("%w: %q is not a commit", ErrInvalidRef, rev)
		}
		return "", fmt.Errorf("resolve %q: %w", rev, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// defaultBase returns the merge-base of head with the default branch.
func (l *Local) defaultBase(ctx context.Context, head string) (string, error) {
	for _, branch := range defaultBranches {
		sha, err := l.resolve(ctx, branch)
		if errors.Is(err, ErrInvalidRef) {
			continue
		}
		if err != nil {
			return "", err
		}
		out, err := l.run(ctx, 4096, "merge-base", head, sha)
		if err != nil {
			var exit *exec.ExitError
			if errors.As(err, &exit) && exit.ExitCode() == 1 {
				return "", fmt.Errorf("%w: %s has no common ancestor with %s", ErrInvalidRef, short(head), branch)
			}
			return "", fmt.Errorf("merge-base with %s: %w", branch, err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	return "", fmt.Errorf("%w: no default branch to take the base from (tried %s); name a base", ErrInvalidRef, strings.Join(defaultBranches, ", "))
}

// checkRev refuses revisions that git could read as an option, or that
// would break the line-based cat-file protocol or the rev:path syntax.
func checkRev(rev string) error {
	if rev == "" || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, ":\n\r\x00") {
		return fmt.Errorf("%w: %q", ErrInvalidRef, rev)
	}
	return nil
}

// run runs git with args and returns its standard output, at most limit
// bytes of it (more is ErrTooLarge).
func (l *Local) run(ctx context.Context, limit int64, args ...string) ([]byte, error) {
	return l.runWith(ctx, limit, nil, args...)
}

// runWith is run with stdin fed to git.
func (l *Local) runWith(ctx context.Context, limit int64, stdin io.Reader, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, l.gitTimeout())
	defer cancel()
	cmd, out, stderr, err := l.start(ctx, stdin, args...)
	if err != nil {
		return nil, err
	}
	data, rerr := io.ReadAll(io.LimitReader(out, limit+1))
	if int64(len(data)) > limit {
		cancel()
		_ = cmd.Wait()
		return nil, fmt.Errorf("git %s: output over %d bytes: %w", args[0], limit, ErrTooLarge)
	}
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], ctx.Err())
	}
	if werr != nil {
		return nil, fmt.Errorf("git %s: %w: %s", args[0], werr, strings.TrimSpace(stderr.String()))
	}
	if rerr != nil {
		return nil, fmt.Errorf("git %s: %w", args[0], rerr)
	}
	return data, nil
}

// start starts git with args and stdin; its standard output is to be read
// from out, and the start of its standard error is kept in stderr.
func (l *Local) start(ctx context.Context, stdin io.Reader, args ...string) (cmd *exec.Cmd, out io.ReadCloser, stderr *headBuffer, err error) {
	cmd = l.command(ctx, args...)
	cmd.Stdin = stdin
	stderr = &headBuffer{}
	cmd.Stderr = stderr
	if out, err = cmd.StdoutPipe(); err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, fmt.Errorf("git %s: %w", args[0], err)
	}
	return cmd, out, stderr, nil
}

// safeConfig overrides, on the command line (which wins over the
// repository's own configuration), every setting that would run a program
// or reach the network.
var safeConfig = []string{
	"--no-pager",
	"-c", "core.fsmonitor=false",
	"-c", "core.hooksPath=" + os.DevNull,
	"-c", "core.attributesFile=" + os.DevNull,
	"-c", "core.pager=cat",
	"-c", "protocol.allow=never",
	"-c", "diff.suppressBlankEmpty=false",
	"-c", "core.quotePath=true",
}

// command returns git with args, the safe configuration and a clean
// environment: nothing from ours (GIT_DIR, GIT_EXTERNAL_DIFF, …) leaks in.
func (l *Local) command(ctx context.Context, args ...string) *exec.Cmd {
	git := l.Git
	if git == "" {
		git = "git"
	}
	cmd := exec.CommandContext(ctx, git, append(append([]string{}, safeConfig...), args...)...)
	cmd.Dir = l.Dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.DevNull,
		"XDG_CONFIG_HOME=" + os.DevNull,
		"LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_NO_LAZY_FETCH=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_PAGER=cat",
		"PAGER=cat",
	}
	cmd.Env = append(cmd.Env, l.env...)
	// Fetches go out through the operator's proxy, as the API client's
	// requests do (net/http reads the same variables).
	for _, k := range proxyVars {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.WaitDelay = time.Second
	return cmd
}

// proxyVars are the proxy settings git and net/http both read.
var proxyVars = []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"}

func (l *Local) maxFileSize() int64 {
	if l.MaxFileSize > 0 {
		return l.MaxFileSize
	}
	return DefaultMaxFileSize
}

func (l *Local) maxDiffSize() int64 {
	if l.MaxDiffSize > 0 {
		return l.MaxDiffSize
	}
	return DefaultMaxDiffSize
}

func (l *Local) gitTimeout() time.Duration {
	if l.GitTimeout > 0 {
		return l.GitTimeout
	}
	return DefaultGitTimeout
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// headBuffer keeps the first few KiB written to it: enough of git's
// standard error for a message, never unbounded.
type headBuffer struct{ b bytes.Buffer }

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := 4096 - h.b.Len(); room > 0 {
		h.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (h *headBuffer) String() string { return h.b.String() }
