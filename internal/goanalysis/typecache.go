package goanalysis

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"go/types"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/tools/go/types/objectpath"
)

// The summaries of the packages outside the repository (their export
// data and deprecations, typecheck.go) are kept across loads, in files
// under the cache directory, by a key of everything checking them reads:
// the content of each of their files, the keys of their imports, the Go
// version they are checked at, the target's sizes, and the versions of
// quorum's type checker and analyzers. A review then type-checks only
// the dependencies that no earlier review checked with the same files:
// the standard library once per Go version, a module version once.
//
// A summary is kept only for a package that type-checked without error
// and whose imports all did; it is used only when all its imports' are
// too, so the packages it refers to are decoded from summaries as well,
// never mixed with the same package checked from source.
//
// The files are quorum's: the go command's sandbox is not shown the
// directory. Each ends in a SHA-256 of the rest; one that does not match
// (a torn write, a flipped bit) is removed and its package checked
// again.

// typesCacheMaxBytes bounds the summaries' directory: past it the
// least recently used are removed.
const typesCacheMaxBytes = 1 << 30

// typesCacheFormat names the layout of a summary's file and of its key.
const typesCacheFormat = "quorum-types 1\n"

// typesCacheMaxFile is the largest summary file read back (net/http's is
// under 200 KiB).
const typesCacheMaxFile = 64 << 20

type typesCache struct {
	dir      string
	maxBytes int64
	// lastPrune is when the loader last started a prune, in Unix
	// nanoseconds (pruneTypesCache).
	lastPrune atomic.Int64
}

func newTypesCache(dir string) *typesCache {
	return &typesCache{dir: dir, maxBytes: typesCacheMaxBytes}
}

// A typesKey names one summary.
type typesKey [sha256.Size]byte

func (k typesKey) path(dir string) string {
	s := hex.EncodeToString(k[:])
	return filepath.Join(dir, s[:2], s[2:])
}

// cachedSummary is a summary as its file holds it.
type cachedSummary struct {
	Data          []byte
	Deprecated    []cachedDeprecation
	PkgDeprecated string
}

type cachedDeprecation struct {
	Path string
	Msg  string
}

// get returns the summary kept under key, if any. Its file's time is set
// to now, at most once an hour, for pruning.
func (c *typesCache) get(key typesKey) (*summary, bool) {
	name := key.path(c.dir)
	f, err := os.Open(name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, typesCacheMaxFile+1))
	if err != nil {
		return nil, false
	}
	body, ok := verify(b)
	var cs cachedSummary
	if !ok || gob.NewDecoder(bytes.NewReader(body)).Decode(&cs) != nil {
		os.Remove(name)
		return nil, false
	}
	if fi, err := f.Stat(); err == nil && time.Since(fi.ModTime()) > time.Hour {
		now := time.Now()
		os.Chtimes(name, now, now)
	}
	s := &summary{data: cs.Data, pkgDeprecated: cs.PkgDeprecated}
	for _, d := range cs.Deprecated {
		s.deprecated = append(s.deprecated, deprecation{objectpath.Path(d.Path), d.Msg})
	}
	return s, true
}

// verify returns the body of a summary's file when its header and its
// checksum are right.
func verify(b []byte) ([]byte, bool) {
	if len(b) > typesCacheMaxFile || len(b) < len(typesCacheFormat)+sha256.Size || !bytes.HasPrefix(b, []byte(typesCacheFormat)) {
		return nil, false
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, false
	}
	return body[len(typesCacheFormat):], true
}

// remove drops the summary kept under key.
func (c *typesCache) remove(key typesKey) { os.Remove(key.path(c.dir)) }

// put keeps s under key: written to a temporary file, then renamed, so
// a reader never sees half a file. One larger than get reads is not kept.
func (c *typesCache) put(key typesKey, s *summary) error {
	cs := cachedSummary{Data: s.data, PkgDeprecated: s.pkgDeprecated}
	for _, d := range s.deprecated {
		cs.Deprecated = append(cs.Deprecated, cachedDeprecation{string(d.path), d.msg})
	}
	var buf bytes.Buffer
	buf.WriteString(typesCacheFormat)
	if err := gob.NewEncoder(&buf).Encode(cs); err != nil {
		return err
	}
	if buf.Len()+sha256.Size > typesCacheMaxFile {
		return fmt.Errorf("a summary of %d bytes is over the bound of %d", buf.Len(), typesCacheMaxFile)
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	name := key.path(c.dir)
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), ".tmp-")
	if err != nil {
		return err
	}
	_, err = tmp.Write(buf.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// pruneTypesCache prunes the summaries after a load, in the background,
// at most every pruneEvery, as pruneModCache does the module cache.
func (l *Loader) pruneTypesCache() {
	c := l.typesCache
	if c == nil {
		return
	}
	now := time.Now().UnixNano()
	if last := c.lastPrune.Load(); now-last < int64(pruneEvery) || !c.lastPrune.CompareAndSwap(last, now) {
		return
	}
	l.pruning.Add(1)
	go func() {
		defer l.pruning.Done()
		c.prune()
	}()
}

// prune removes the least recently used summaries while the directory
// holds more than maxBytes, down to three quarters of it. A reader that
// loses a file to it checks the package again.
func (c *typesCache) prune() {
	type entry struct {
		name string
		size int64
		mod  time.Time
	}
	var entries []entry
	var total int64
	filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		// A temporary file an interrupted write left is old news
		// after an hour; younger ones may be being written.
		if d.Name()[0] == '.' && time.Since(fi.ModTime()) < time.Hour {
			return nil
		}
		entries = append(entries, entry{p, fi.Size(), fi.ModTime()})
		total += fi.Size()
		return nil
	})
	if total <= c.maxBytes {
		return
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].mod.Before(entries[j].mod) })
	for _, e := range entries {
		if total <= c.maxBytes/4*3 {
			break
		}
		// Gone already: another process's prune took it.
		if err := os.Remove(e.name); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= e.size
		}
	}
}

var (
	buildIDOnce sync.Once
	buildID     string
	// startDir is the process's working directory as it started: a test
	// binary's package directory, before any test changes it.
	startDir, _ = os.Getwd()
)

// quorumBuild names the code that checks a summary's package and writes
// it: Go's version (go/types), GODEBUG (gotypesalias and the like change
// what go/types makes) and a SHA-256 of quorum's executable (its x/tools,
// which writes export data and object paths, its staticcheck, which
// reads deprecations, and the loader itself). Another build of quorum, a
// test binary after a change, finds none of this one's summaries. On
// Linux the file hashed is /proc/self/exe, the running one even when an
// upgrade has put another at its path. Empty when the executable cannot
// be read: then nothing is kept. The first load computes it; that it
// is later than the process's start does not matter, since
// /proc/self/exe stays the running file. A test binary names its build
// by its source instead (sourceBuild).
func quorumBuild() string {
	buildIDOnce.Do(func() {
		if testing.Testing() {
			if exe, err := os.Stat("/proc/self/exe"); err == nil && startDir != "" {
				if sum := sourceBuild(startDir, exe.ModTime()); sum != "" {
					buildID = runtime.Version() + " GODEBUG=" + os.Getenv("GODEBUG") + " source " + sum + " " + buildSettings()
					return
				}
			}
		}
		f, err := os.Open("/proc/self/exe")
		if err != nil {
			exe, err := os.Executable()
			if err != nil {
				return
			}
			if f, err = os.Open(exe); err != nil {
				return
			}
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return
		}
		buildID = runtime.Version() + " GODEBUG=" + os.Getenv("GODEBUG") + " " + hex.EncodeToString(h.Sum(nil))
	})
	return buildID
}

// sourceBuild names a test binary's build by the source it was built
// from: a SHA-256 of the Go files of the module above dir (testdata and
// hidden directories aside), its go.mod and its go.sum; "" when dir is
// in no module, or when a file hashed is newer than built (the
// executable's time: the source was edited after the binary was built
// from it, so it does not name the binary). Every test binary of one
// tree holds the same loader,
// x/tools and staticcheck, so they share summaries as the copies of one
// quorum build do. Named by its executable, as a build otherwise is,
// each package's test binary checked the standard library again: about
// 10 s of CPU each under the race detector, a minute of the test suite.
func sourceBuild(dir string, built time.Time) string {
	root := dir
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			return ""
		}
		root = parent
	}
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if e.IsDir() {
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() || !(strings.HasSuffix(name, ".go") || p == filepath.Join(root, "go.mod") || p == filepath.Join(root, "go.sum")) {
			return nil
		}
		if fi, err := e.Info(); err != nil || !built.IsZero() && fi.ModTime().After(built) {
			return errEditedSince
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write([]byte(filepath.ToSlash(rel) + "\x00"))
		h.Write(n[:])
		h.Write(b)
		return nil
	})
	if err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

var errEditedSince = errors.New("a file was edited after the build")

// buildSettings is what else names a test binary's build beside its
// source: the settings it was built with (tags, GOARCH, the DefaultGODEBUG
// its //go:debug lines make, which change what go/types makes) and the
// modules it was built from, with their sums and replacements.
func buildSettings() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, d := range bi.Deps {
		fmt.Fprintf(&b, "dep %s %s %s\n", d.Path, d.Version, d.Sum)
		if r := d.Replace; r != nil {
			fmt.Fprintf(&b, "=> %s %s %s\n", r.Path, r.Version, r.Sum)
		}
	}
	for _, st := range bi.Settings {
		fmt.Fprintf(&b, "%s=%s\n", st.Key, st.Value)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// dependencyKey returns the key of a package outside the repository:
// what go list says of it, its files' names and contents, and its
// imports' keys by import path.
func dependencyKey(goVersion string, sizes types.Sizes, id, pkgPath, name string, files []string, contents [][]byte, imports map[string]typesKey) typesKey {
	h := sha256.New()
	field := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	field(typesCacheFormat)
	field(quorumBuild())
	field(goVersion)
	field(fmt.Sprintf("%#v", sizes))
	field(id)
	field(pkgPath)
	field(name)
	for i, f := range files {
		field(f)
		sum := sha256.Sum256(contents[i])
		field(string(sum[:]))
	}
	for _, ip := range slices.Sorted(maps.Keys(imports)) {
		field(ip)
		k := imports[ip]
		field(string(k[:]))
	}
	var k typesKey
	h.Sum(k[:0])
	return k
}
