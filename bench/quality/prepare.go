package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxBundle is the size a case's bundle should stay under
// (/work/corpus-format.md); a bigger one is reported, not refused.
const maxBundle = 2 << 20

// The synthesized commits' identity and dates, fixed so that a case's
// base and head SHAs depend on its source commit alone.
var commitEnv = []string{
	"GIT_AUTHOR_NAME=quorum bench", "GIT_AUTHOR_EMAIL=bench@quorum.invalid",
	"GIT_COMMITTER_NAME=quorum bench", "GIT_COMMITTER_EMAIL=bench@quorum.invalid",
}

const (
	baseDate = "2000-01-01T00:00:00+0000"
	headDate = "2000-01-02T00:00:00+0000"
)

// Meta is a prepared case's record, case.json in its directory.
type Meta struct {
	// Spec is what the case was prepared from; a case whose corpus entry
	// changed is prepared again.
	Spec   string `json:"spec"`
	Base   string `json:"base"`
	Head   string `json:"head"`
	Bundle int64  `json:"bundle_bytes"`
	// Absent counts the files whose blobs the snapshot lacks (a partial
	// clone leaves out the largest): placeholders stand in for them.
	Absent int `json:"absent_blobs,omitempty"`
	// Thinned counts the big unchanged files the review does not read,
	// replaced by placeholders to keep the bundle small.
	Thinned int `json:"thinned_files,omitempty"`
	// Modules is "ok" when the Go modules of base and head were
	// downloaded and load offline, else what went wrong.
	Modules string `json:"modules"`
	// Warnings are the packages that do not load offline, from go list.
	Warnings []string `json:"warnings,omitempty"`
}

// layout is the version of how prepare makes a case; a case made by an
// older one is made again.
const layout = "2"

// spec identifies what a case is made from, and how.
func spec(k Case) string {
	return strings.Join(append([]string{"layout" + layout, k.Repo, k.Kind, k.Commit}, k.Paths...), " ")
}

// preparer materialises cases from the mirrors into the work directory.
type preparer struct {
	mirrors string
	work    string
	stderr  io.Writer
}

// caseDir is where case id lives.
func caseDir(work, id string) string { return filepath.Join(work, id) }

// readMeta reads the record of a prepared case.
func readMeta(dir string) (Meta, error) {
	var m Meta
	b, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %w", filepath.Join(dir, "case.json"), err)
	}
	return m, nil
}

func writeMeta(dir string, m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "case.json"), append(b, '\n'), 0o644)
}

// prepare makes case k ready, unless it already is.
func (p *preparer) prepare(ctx context.Context, k Case) error {
	dir := caseDir(p.work, k.ID)
	m, err := readMeta(dir)
	switch {
	case err == nil && m.Spec == spec(k) && m.Modules == "ok":
		fmt.Fprintf(p.stderr, "quality: %s ready\n", k.ID)
		return nil
	case err == nil && m.Spec == spec(k):
		// Materialised; only the modules are missing.
	default:
		if m, err = p.materialise(ctx, k, dir); err != nil {
			return err
		}
	}
	t := time.Now()
	m.Modules, m.Warnings = "ok", nil
	mods, warnings, err := downloadModules(ctx, filepath.Join(dir, "repo.git"), m.Base, m.Head)
	if err != nil {
		m.Modules = err.Error()
	}
	m.Warnings = warnings
	if err := writeMeta(dir, m); err != nil {
		return err
	}
	if m.Modules != "ok" {
		return fmt.Errorf("%s: go modules: %s", k.ID, m.Modules)
	}
	for _, w := range warnings {
		fmt.Fprintf(p.stderr, "quality: %s: warning: %s\n", k.ID, w)
	}
	if mods == 0 {
		fmt.Fprintf(p.stderr, "quality: %s: no go.mod holds the changed Go files: no module to download\n", k.ID)
	} else {
		fmt.Fprintf(p.stderr, "quality: %s: modules of %d go.mod files (base and head) downloaded in %s\n", k.ID, mods, time.Since(t).Round(time.Millisecond))
	}
	return nil
}

// materialise writes case k into dir: a bundle of its two synthesized
// commits, and a bare repository made from it.
func (p *preparer) materialise(ctx context.Context, k Case, dir string) (Meta, error) {
	t := time.Now()
	mirror, err := mirrorGitDir(p.mirrors, k.Repo)
	if err != nil {
		return Meta{}, fmt.Errorf("%s: %w", k.ID, err)
	}
	scratch, err := os.MkdirTemp(p.work, ".scratch-"+k.ID+"-")
	if err != nil {
		return Meta{}, err
	}
	defer os.RemoveAll(scratch)

	// A scratch repository that borrows the mirror's objects: the new
	// trees and commits are written into it, the mirror is only read.
	sg := filepath.Join(scratch, "scratch.git")
	if _, err := git(ctx, "", nil, "init", "-q", "--bare", sg); err != nil {
		return Meta{}, err
	}
	objects, err := filepath.Abs(filepath.Join(mirror, "objects"))
	if err != nil {
		return Meta{}, err
	}
	if err := os.WriteFile(filepath.Join(sg, "objects", "info", "alternates"), []byte(objects+"\n"), 0o644); err != nil {
		return Meta{}, err
	}
	g := func(env []string, args ...string) (string, error) { return git(ctx, sg, env, args...) }
	if _, err := g(nil, "cat-file", "-e", k.Commit+"^{commit}"); err != nil {
		return Meta{}, fmt.Errorf("%s: commit %s is not in the snapshot of %s at %s (fetch a newer snapshot, or check the SHA)", k.ID, k.Commit, k.Repo, mirror)
	}
	parent, err := g(nil, "rev-parse", "--verify", "-q", k.Commit+"^1")
	if err != nil {
		return Meta{}, fmt.Errorf("%s: commit %s has no parent", k.ID, k.Commit)
	}
	var baseTree, headTree, headMsg string
	switch k.Kind {
	case kindOrdinary:
		baseTree, headTree, headMsg = parent+"^{tree}", k.Commit+"^{tree}", k.Title
	case kindBug:
		baseTree, headMsg = k.Commit+"^{tree}", "Revert \""+k.Title+"\""
		if headTree, err = revertTree(ctx, sg, scratch, parent, k); err != nil {
			return Meta{}, fmt.Errorf("%s: %w", k.ID, err)
		}
	}
	// A snapshot may be a partial clone without its largest blobs, and
	// the review reads only Go files, what the go command reads and the
	// changed files: the others, when big, become placeholders, the same
	// at base and at head.
	out, err := g(nil, "diff-tree", "-r", "-z", "--no-renames", "--name-only", baseTree, headTree)
	if err != nil {
		return Meta{}, err
	}
	changed := map[string]bool{}
	for _, p := range splitZ(out) {
		changed[p] = true
	}
	absent, thinned := 0, 0
	for _, t := range []*string{&baseTree, &headTree} {
		var a, n int
		if *t, a, n, err = thin(ctx, sg, scratch, *t, changed); err != nil {
			return Meta{}, fmt.Errorf("%s: %w", k.ID, err)
		}
		absent, thinned = max(absent, a), max(thinned, n)
	}
	source := fmt.Sprintf("\n\nquorum bench/quality case %s, from %s@%s", k.ID, k.Repo, k.Commit)
	base, err := g(append(slices.Clone(commitEnv), "GIT_AUTHOR_DATE="+baseDate, "GIT_COMMITTER_DATE="+baseDate),
		"commit-tree", baseTree, "-m", "base"+source)
	if err != nil {
		return Meta{}, err
	}
	head, err := g(append(slices.Clone(commitEnv), "GIT_AUTHOR_DATE="+headDate, "GIT_COMMITTER_DATE="+headDate),
		"commit-tree", headTree, "-p", base, "-m", headMsg+source)
	if err != nil {
		return Meta{}, err
	}
	for ref, sha := range map[string]string{"refs/heads/base": base, "refs/heads/head": head} {
		if _, err := g(nil, "update-ref", ref, sha); err != nil {
			return Meta{}, err
		}
	}
	bundle := filepath.Join(scratch, "case.bundle")
	if _, err := g(nil, "bundle", "create", "-q", bundle, "refs/heads/base", "refs/heads/head"); err != nil {
		return Meta{}, fmt.Errorf("%s: bundle (is the snapshot missing objects?): %w", k.ID, err)
	}
	// The repository the review reads, on its own: no alternates.
	repo := filepath.Join(scratch, "repo.git")
	if _, err := git(ctx, "", nil, "init", "-q", "--bare", repo); err != nil {
		return Meta{}, err
	}
	if _, err := git(ctx, repo, nil, "fetch", "-q", bundle, "refs/heads/*:refs/heads/*"); err != nil {
		return Meta{}, err
	}
	st, err := os.Stat(bundle)
	if err != nil {
		return Meta{}, err
	}
	m := Meta{Spec: spec(k), Base: base, Head: head, Bundle: st.Size(), Absent: absent, Thinned: thinned, Modules: "not downloaded"}
	final := filepath.Join(scratch, "case")
	if err := os.Mkdir(final, 0o755); err != nil {
		return Meta{}, err
	}
	for _, n := range []string{"case.bundle", "repo.git"} {
		if err := os.Rename(filepath.Join(scratch, n), filepath.Join(final, n)); err != nil {
			return Meta{}, err
		}
	}
	if err := writeMeta(final, m); err != nil {
		return Meta{}, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return Meta{}, err
	}
	if err := os.Rename(final, dir); err != nil {
		return Meta{}, err
	}
	big := ""
	if m.Bundle > maxBundle {
		big = fmt.Sprintf(" (over %s)", mb(maxBundle))
	}
	if absent > 0 {
		big += fmt.Sprintf(", %d files absent from the snapshot replaced by placeholders", absent)
	}
	if thinned > 0 {
		big += fmt.Sprintf(", %d big files the review does not read left out", thinned)
	}
	fmt.Fprintf(p.stderr, "quality: %s materialised in %s: base %.12s, head %.12s, bundle %.1f kB%s\n",
		k.ID, time.Since(t).Round(time.Millisecond), base, head, float64(m.Bundle)/1e3, big)
	return m, nil
}

// revertTree writes the head tree of bug case k: the fix's tree with the
// case's paths (all the files the fix touched when it lists none) as they
// were in the fix's parent.
func revertTree(ctx context.Context, gitDir, scratch, parent string, k Case) (string, error) {
	paths := k.Paths
	if len(paths) == 0 {
		out, err := git(ctx, gitDir, nil, "diff-tree", "-r", "-z", "--no-renames", "--name-only", parent, k.Commit)
		if err != nil {
			return "", err
		}
		paths = splitZ(out)
		if len(paths) == 0 {
			return "", fmt.Errorf("the fix %s changes no file", k.Commit)
		}
	}
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(scratch, "index")}
	if _, err := git(ctx, gitDir, env, "read-tree", k.Commit); err != nil {
		return "", err
	}
	changed := 0
	for _, p := range paths {
		was, err := git(ctx, gitDir, nil, "ls-tree", "-z", parent, "--", p)
		if err != nil {
			return "", err
		}
		is, err := git(ctx, gitDir, nil, "ls-tree", "-z", k.Commit, "--", p)
		if err != nil {
			return "", err
		}
		if was == is {
			if was == "" {
				return "", fmt.Errorf("path %s is neither in the fix nor in its parent", p)
			}
			return "", fmt.Errorf("path %s is not changed by the fix", p)
		}
		changed++
		if was == "" {
			// The fix added the file: the revert deletes it.
			if _, err := git(ctx, gitDir, env, "update-index", "--force-remove", "--", p); err != nil {
				return "", err
			}
			continue
		}
		// "<mode> <type> <sha>\t<path>"
		meta, _, _ := strings.Cut(strings.TrimRight(was, "\x00"), "\t")
		f := strings.Fields(meta)
		if len(f) != 3 || f[1] != "blob" {
			return "", fmt.Errorf("path %s is not a file in the fix's parent", p)
		}
		if _, err := git(ctx, gitDir, env, "update-index", "--add", "--cacheinfo", f[0]+","+f[2]+","+p); err != nil {
			return "", err
		}
	}
	// A blob the snapshot lacks elsewhere in the tree is fine here: thin
	// puts a placeholder in its place next.
	return git(ctx, gitDir, env, "write-tree", "--missing-ok")
}

// thinThreshold is the size above which an unchanged file that the Go
// review never reads is left out of a case.
const thinThreshold = 16 << 10

// keptWhole says whether the review may read the file at p even when the
// change does not touch it: Go sources and what the go command reads.
func keptWhole(p string) bool {
	switch path.Base(p) {
	case "go.mod", "go.sum", "go.work", "go.work.sum", "modules.txt", ".quorum.yaml", ".quorum.yml":
		return true
	}
	return strings.HasSuffix(p, ".go")
}

// thin returns tree with placeholders, naming the blob they replace, for
// the blobs the repository lacks and for the unchanged files over
// thinThreshold that the review never reads (images, fixtures, assets);
// the files stay, so a //go:embed pattern still matches. It counts both.
func thin(ctx context.Context, gitDir, scratch, tree string, changed map[string]bool) (string, int, int, error) {
	out, err := git(ctx, gitDir, nil, "ls-tree", "-r", "-z", "--full-tree", tree)
	if err != nil {
		return "", 0, 0, err
	}
	type entry struct{ mode, sha, path string }
	var blobs []entry
	var shas strings.Builder
	for _, l := range splitZ(out) {
		meta, p, _ := strings.Cut(l, "\t")
		f := strings.Fields(meta)
		if len(f) == 3 && f[1] == "blob" {
			blobs = append(blobs, entry{f[0], f[2], p})
			shas.WriteString(f[2] + "\n")
		}
	}
	cmd := exec.CommandContext(ctx, "git", "--git-dir", gitDir, "cat-file", "--batch-check=%(objectname) %(objectsize)")
	cmd.Env = gitEnv(nil)
	cmd.Stdin = strings.NewReader(shas.String())
	res, err := cmd.Output()
	if err != nil {
		return "", 0, 0, fmt.Errorf("git cat-file --batch-check: %w", err)
	}
	missing, big := map[string]bool{}, map[string]bool{}
	for _, l := range strings.Split(string(res), "\n") {
		sha, size, _ := strings.Cut(l, " ")
		if size == "missing" {
			missing[sha] = true
		} else if n, err := strconv.ParseInt(size, 10, 64); err == nil && n > thinThreshold {
			big[sha] = true
		}
	}
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(scratch, "thin-index")}
	if _, err := git(ctx, gitDir, env, "read-tree", tree); err != nil {
		return "", 0, 0, err
	}
	absent, thinned := 0, 0
	for _, b := range blobs {
		var why string
		switch {
		case missing[b.sha]:
			absent++
			why = "is absent from the repository's snapshot"
		case big[b.sha] && !changed[b.path] && !keptWhole(b.path):
			thinned++
			why = "is left out of the case: the review does not read it"
		default:
			continue
		}
		hash := exec.CommandContext(ctx, "git", "--git-dir", gitDir, "hash-object", "-w", "--stdin")
		hash.Env = gitEnv(nil)
		hash.Stdin = strings.NewReader("placeholder: blob " + b.sha + " " + why + "\n")
		ph, err := hash.Output()
		if err != nil {
			return "", 0, 0, fmt.Errorf("git hash-object: %w", err)
		}
		if _, err := git(ctx, gitDir, env, "update-index", "--cacheinfo", b.mode+","+strings.TrimSpace(string(ph))+","+b.path); err != nil {
			return "", 0, 0, err
		}
	}
	if absent+thinned == 0 {
		return tree, 0, 0, nil
	}
	t, err := git(ctx, gitDir, env, "write-tree")
	return t, absent, thinned, err
}

// mirrorGitDir finds the git directory of repo's snapshot under mirrors:
// the search tool's fetch puts it at most three levels below
// <mirrors>/<owner>+<name>.
func mirrorGitDir(mirrors, repo string) (string, error) {
	root := filepath.Join(mirrors, strings.Replace(repo, "/", "+", 1))
	if _, err := os.Stat(root); err != nil {
		return "", fmt.Errorf("no snapshot of %s at %s: fetch it first (the search tool's fetch with source \"github:%s\")", repo, root, repo)
	}
	var found string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return fs.SkipDir
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && rel != "." && strings.Count(rel, string(filepath.Separator)) >= 2 {
			return fs.SkipDir
		}
		if d.IsDir() && isFile(filepath.Join(p, "HEAD")) && isDir(filepath.Join(p, "objects")) {
			found = p
			return fs.SkipAll
		}
		return nil
	})
	if err != nil && found == "" {
		return "", err
	}
	if found == "" {
		return "", fmt.Errorf("no git directory in the snapshot of %s at %s: fetch it again (the search tool's fetch with source \"github:%s\")", repo, root, repo)
	}
	return found, nil
}

func isFile(p string) bool { st, err := os.Stat(p); return err == nil && st.Mode().IsRegular() }
func isDir(p string) bool  { st, err := os.Stat(p); return err == nil && st.IsDir() }

// downloadModules fetches, with the user's go environment (GOPROXY and
// module cache), the modules that the changed Go packages need at base and
// at head, then checks that they load offline as the review loads them.
// It returns how many go.mod files (at base and head) it downloaded for,
// and the packages that still do not load, as warnings.
func downloadModules(ctx context.Context, repo, base, head string) (int, []string, error) {
	out, err := git(ctx, repo, nil, "diff", "-z", "--no-renames", "--name-only", base, head)
	if err != nil {
		return 0, nil, err
	}
	var dirs []string
	for _, p := range splitZ(out) {
		if strings.HasSuffix(p, ".go") || path.Base(p) == "go.mod" {
			if d := path.Dir(p); !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	if len(dirs) == 0 {
		return 0, nil, nil
	}
	var warnings []string
	mods := 0
	for _, rev := range []string{base, head} {
		n, w, err := downloadAt(ctx, repo, rev, dirs)
		if err != nil {
			return mods, warnings, fmt.Errorf("at %.12s: %w", rev, err)
		}
		mods += n
		warnings = append(warnings, w...)
	}
	return mods, warnings, nil
}

// downloadAt checks rev out into a temporary directory and downloads the
// modules of the go.mod files that hold dirs.
func downloadAt(ctx context.Context, repo, rev string, dirs []string) (int, []string, error) {
	tmp, err := os.MkdirTemp("", "quorum-quality-")
	if err != nil {
		return 0, nil, err
	}
	defer os.RemoveAll(tmp)
	if err := extract(ctx, repo, rev, tmp); err != nil {
		return 0, nil, err
	}
	// The nearest go.mod above each changed directory, and the
	// directories below each.
	mods := map[string][]string{}
	var order []string
	for _, d := range dirs {
		if !isDir(filepath.Join(tmp, filepath.FromSlash(d))) {
			continue // not at this revision
		}
		for m := d; ; m = path.Dir(m) {
			if isFile(filepath.Join(tmp, filepath.FromSlash(m), "go.mod")) {
				if _, ok := mods[m]; !ok {
					order = append(order, m)
				}
				rel := strings.TrimPrefix(strings.TrimPrefix(d, m), "/")
				mods[m] = append(mods[m], "./"+rel)
				break
			}
			if m == "." {
				break // no go.mod: GOPATH-era code, nothing to download
			}
		}
	}
	var warnings []string
	for _, m := range order {
		dir := filepath.Join(tmp, filepath.FromSlash(m))
		online := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
		if _, err := goCmd(ctx, dir, online, "mod", "download"); err != nil {
			return 0, warnings, fmt.Errorf("%s/go.mod: %w", m, err)
		}
		// go list fetches what go mod download leaves out (a test
		// dependency of an older module, say); then, offline, it must
		// find everything the review's go list will ask for.
		pkgs := append([]string{"list", "-e", "-deps", "-test", "-f", "{{with .Error}}{{$.ImportPath}}: {{.Err}}{{end}}", "--"}, mods[m]...)
		if _, err := goCmd(ctx, dir, online, pkgs...); err != nil {
			return 0, warnings, fmt.Errorf("%s: go list: %w", m, err)
		}
		offline := append(slices.Clone(online), "GOPROXY=off", "GOSUMDB=off")
		out, err := goCmd(ctx, dir, offline, pkgs...)
		if err != nil {
			return 0, warnings, fmt.Errorf("%s: offline go list: %w", m, err)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if l != "" {
				warnings = append(warnings, fmt.Sprintf("at %.12s, in %s: %s", rev, m, l))
			}
		}
	}
	return len(order), warnings, nil
}

// extract writes the tree of rev into dir, from git archive: regular
// files and directories only.
func extract(ctx context.Context, repo, rev, dir string) error {
	cmd := exec.CommandContext(ctx, "git", "--git-dir", repo, "archive", "--format=tar", rev)
	cmd.Env = gitEnv(nil)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	tr := tar.NewReader(out)
	var xerr error
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			xerr = err
			break
		}
		name := filepath.FromSlash(path.Clean(h.Name))
		if !filepath.IsLocal(name) {
			continue
		}
		target := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			xerr = os.MkdirAll(target, 0o755)
		case tar.TypeReg:
			if xerr = os.MkdirAll(filepath.Dir(target), 0o755); xerr == nil {
				xerr = writeFile(target, tr)
			}
		}
		if xerr != nil {
			break
		}
	}
	if xerr != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("extract %.12s: %w", rev, xerr)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive %.12s: %w: %s", rev, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

func writeFile(name string, r io.Reader) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// gitEnv is the environment of git: no user or system configuration.
func gitEnv(extra []string) []string {
	return append(append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "GIT_LITERAL_PATHSPECS=1"), extra...)
}

// git runs git on gitDir ("" for none) and returns its output, trimmed of
// surrounding white space but for NULs.
func git(ctx context.Context, gitDir string, env []string, args ...string) (string, error) {
	if gitDir != "" {
		args = append([]string{"--git-dir", gitDir}, args...)
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Env = gitEnv(env)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// goCmd runs the go command in dir with env.
func goCmd(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = msg[:2000] + "…"
		}
		return string(out), fmt.Errorf("go %s: %w: %s", args[0], err, msg)
	}
	return string(out), nil
}

// splitZ splits NUL-terminated output.
func splitZ(s string) []string {
	var out []string
	for _, p := range strings.Split(s, "\x00") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
