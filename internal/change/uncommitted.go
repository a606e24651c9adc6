package change

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Uncommitted builds the change from ref.Base (HEAD when empty) to the
// work tree as it is now: staged and unstaged changes of tracked files,
// and untracked files that are not ignored. The work tree's files are read
// by quorum itself, beneath the work tree's root (a symbolic link is
// taken as a link, never followed out), and stored as git objects without
// git's filters (no clean or smudge filter, no textconv, no hook runs);
// their objects, the index that lists them and the commit that holds them
// go to a temporary object directory, so the repository is left as it
// was. The change's HeadSHA is that commit's. Call the returned cleanup
// when done with the change.
func (l *Local) Uncommitted(ctx context.Context, ref Ref) (*Change, func(), error) {
	top, err := l.run(ctx, 4096, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, nil, fmt.Errorf("uncommitted changes need a work tree: %w", err)
	}
	objects, err := l.run(ctx, 4096, "rev-parse", "--path-format=absolute", "--git-path", "objects")
	if err != nil {
		return nil, nil, err
	}
	headSHA, err := l.resolve(ctx, "HEAD")
	if err != nil {
		return nil, nil, err
	}
	tmp, err := os.MkdirTemp("", "quorum-worktree-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	if err := os.Mkdir(filepath.Join(tmp, "objects"), 0o700); err != nil {
		cleanup()
		return nil, nil, err
	}
	w := &Local{Dir: l.Dir, Git: l.Git, MaxFileSize: l.MaxFileSize, MaxDiffSize: l.MaxDiffSize, GitTimeout: l.GitTimeout,
		env: []string{
			"GIT_OBJECT_DIRECTORY=" + filepath.Join(tmp, "objects"),
			"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + strings.TrimSpace(string(objects)),
		}}
	commit, err := l.snapshot(ctx, w, strings.TrimSpace(string(top)), headSHA, filepath.Join(tmp, "index"))
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	ref.Head = commit
	if ref.Base == "" {
		ref.Base = headSHA
	}
	ch, err := w.Change(ctx, ref)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return ch, cleanup, nil
}

// indexEntry is a file as the index lists it.
type indexEntry struct{ mode, sha string }

// snapshot writes the work tree's tracked and untracked, not ignored,
// files as a commit on top of head, through w (whose objects go to the
// temporary directory), with the temporary index file index, and returns
// the commit.
func (l *Local) snapshot(ctx context.Context, w *Local, top, head, index string) (string, error) {
	// What changed is judged against head's tree; the paths to look at
	// are head's, the index's (new files staged) and the untracked ones.
	tree, err := l.run(ctx, l.maxDiffSize(), "ls-tree", "-r", "-z", "--full-tree", head)
	if err != nil {
		return "", err
	}
	committed := map[string]indexEntry{}
	var paths []string
	for _, e := range strings.Split(string(tree), "\x00") {
		// "<mode> SP <type> SP <object> TAB <path>"
		meta, path, ok := strings.Cut(e, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			continue
		}
		committed[path] = indexEntry{mode: f[0], sha: f[2]}
		paths = append(paths, path)
	}
	cached, err := l.run(ctx, l.maxDiffSize(), "ls-files", "-z", "--cached")
	if err != nil {
		return "", err
	}
	for _, p := range strings.Split(string(cached), "\x00") {
		if _, ok := committed[p]; p != "" && !ok {
			paths = append(paths, p)
		}
	}
	others, err := l.run(ctx, l.maxDiffSize(), "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return "", err
	}
	for _, p := range strings.Split(string(others), "\x00") {
		if p != "" && !strings.HasSuffix(p, "/") {
			paths = append(paths, p)
		}
	}

	root, err := os.OpenRoot(top)
	if err != nil {
		return "", err
	}
	defer root.Close()
	sha256Repo := len(head) == 64
	var info bytes.Buffer // update-index -z --index-info
	for _, p := range paths {
		old, isTracked := committed[p]
		if old.mode == "160000" {
			continue // a submodule keeps its recorded commit
		}
		mode, data, err := readWorkFile(root, p, l.maxFileSize())
		if errors.Is(err, fs.ErrNotExist) {
			if isTracked {
				fmt.Fprintf(&info, "0 %s\t%s\x00", strings.Repeat("0", len(head)), p)
			}
			continue
		}
		if err != nil {
			return "", err
		}
		if mode == "" {
			continue // a directory where the index has a file, or a device
		}
		sha := blobName(data, sha256Repo)
		if isTracked && old.mode == mode && old.sha == sha {
			continue
		}
		out, err := w.runStdin(ctx, bytes.NewReader(data), "hash-object", "-w", "--no-filters", "--stdin")
		if err != nil {
			return "", fmt.Errorf("store %s: %w", p, err)
		}
		fmt.Fprintf(&info, "%s %s\t%s\x00", mode, strings.TrimSpace(string(out)), p)
	}
	idx := &Local{Dir: w.Dir, Git: w.Git, GitTimeout: w.GitTimeout, env: append(append([]string{}, w.env...), "GIT_INDEX_FILE="+index,
		"GIT_AUTHOR_NAME=quorum", "GIT_AUTHOR_EMAIL=quorum@localhost", "GIT_COMMITTER_NAME=quorum", "GIT_COMMITTER_EMAIL=quorum@localhost")}
	if _, err := idx.run(ctx, 4096, "read-tree", head); err != nil {
		return "", err
	}
	if _, err := idx.runStdin(ctx, &info, "update-index", "-z", "--index-info"); err != nil {
		return "", err
	}
	tree, err = idx.run(ctx, 4096, "write-tree")
	if err != nil {
		return "", err
	}
	commit, err := idx.run(ctx, 4096, "commit-tree", strings.TrimSpace(string(tree)), "-p", head, "-m", "uncommitted changes")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(commit)), nil
}

// readWorkFile reads path beneath root as git would store it: its mode
// (100644, 100755 or 120000 for a symbolic link, whose target is the
// data) and contents; mode is empty for anything else.
func readWorkFile(root *os.Root, path string, limit int64) (mode string, data []byte, err error) {
	fi, err := root.Lstat(path)
	if err != nil {
		return "", nil, err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := root.Readlink(path)
		return "120000", []byte(target), err
	case !fi.Mode().IsRegular():
		return "", nil, nil
	}
	if fi.Size() > limit {
		return "", nil, fmt.Errorf("read %s: %d bytes, over the limit of %d: %w", path, fi.Size(), limit, ErrTooLarge)
	}
	f, err := root.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return "", nil, err
	}
	if int64(len(data)) > limit {
		return "", nil, fmt.Errorf("read %s: over the limit of %d bytes: %w", path, limit, ErrTooLarge)
	}
	mode = "100644"
	if fi.Mode()&0o111 != 0 {
		mode = "100755"
	}
	return mode, data, nil
}

// blobName is git's object name of a blob holding data.
func blobName(data []byte, sha256Repo bool) string {
	h := sha1.New()
	if sha256Repo {
		h = sha256.New()
	}
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// runStdin is run with stdin fed to git.
func (l *Local) runStdin(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	return l.runWith(ctx, 1<<20, stdin, args...)
}
