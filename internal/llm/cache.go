package llm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"net/url"
	"slices"

	"github.com/quorum-review/quorum/internal/change"
)

// ResultCache keeps what the model said about each file, under a key that
// names everything the model was shown of the file and who was asked, so
// that a file shown again exactly so (at the next push of a pull request,
// or after a rebase that left it alone) is not sent again. serve gives
// each review the cache of its repository (internal/llmcache); another
// repository's results are never in it.
type ResultCache interface {
	// Get returns the results stored under keys, by key; a key with none
	// is absent from the map.
	Get(ctx context.Context, keys []string) (map[string][]byte, error)
	// Put stores results by key.
	Put(ctx context.Context, results map[string][]byte) error
}

// WithResultCache makes the engine reuse, and store, its results per file
// in rc.
func WithResultCache(rc ResultCache) Option {
	return func(e *Engine) { e.cache = rc }
}

// promptVersion is in every cache key. Change it when what a file's
// findings are made from changes in a way the rest of the key does not
// show: the system prompt and the file's sections are in the key already,
// but the answer's schema, the request's other fields and the storage
// format (cachedFile) are not.
const promptVersion = "llm-file-results-1"

// cachedFile is one file's results as the cache holds them: the model's
// findings as it wrote them, each with the file's path. They are checked
// against the change again when they are used (Engine.findings), as an
// answer is.
type cachedFile struct {
	Findings []rawFinding `json:"findings"`
}

// reused is what the cache gave one review.
type reused struct {
	// keys are the cache keys of the change's files, by path; a file
	// whose head could not be read has none (it is always sent).
	keys map[string]string
	// paths are the files whose results came from the cache, and raws
	// their findings.
	paths []string
	raws  []rawFinding
}

// fromCache looks the change's files up in the cache and returns the parts
// still to send: those of the files the cache has no results for. A cache
// that fails is logged and leaves every part to send.
func (e *Engine) fromCache(ctx context.Context, c *change.Change, parts []part) ([]part, reused) {
	r := reused{keys: map[string]string{}}
	if e.cache == nil {
		return parts, r
	}
	sections := map[string][]string{}
	var paths []string
	for _, p := range parts {
		if _, ok := sections[p.path]; !ok {
			paths = append(paths, p.path)
		}
		sections[p.path] = append(sections[p.path], p.text)
	}
	files := map[string]*change.File{}
	for _, f := range c.Files {
		files[f.Path()] = f
	}
	asked := e.asked()
	var keys []string
	for _, path := range paths {
		if f := files[path]; f != nil {
			if k, ok := e.fileKey(ctx, c, asked, f, sections[path]); ok {
				r.keys[path] = k
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return parts, r
	}
	got, err := e.cache.Get(ctx, keys)
	if err != nil {
		e.log.WarnContext(ctx, "llm: the cache of earlier results could not be read; sending every file", "specialist", e.name, "err", err)
		return parts, r
	}
	hit := map[string]bool{}
	for _, path := range paths {
		data, ok := got[r.keys[path]]
		if !ok {
			continue
		}
		var cf cachedFile
		if json.Unmarshal(data, &cf) != nil {
			continue
		}
		for _, f := range cf.Findings {
			// The key has the path, so a result is only ever this
			// file's; its findings name it whatever the row says.
			f.Path = path
			r.raws = append(r.raws, f)
		}
		hit[path] = true
		r.paths = append(r.paths, path)
	}
	return slices.DeleteFunc(parts, func(p part) bool { return hit[p.path] }), r
}

// toCache stores the results of the files every request of which was
// answered in full: not a file of a request that was not sent, failed, or
// was cut off (its findings were salvaged). A file the model found nothing
// in stores an empty result. The model's findings go to the file they
// name among the files of their request; one naming a file the request did
// not show is not stored.
func (e *Engine) toCache(ctx context.Context, c *change.Change, r reused, chunks []chunk, results []chunkResult) {
	if e.cache == nil || len(r.keys) == 0 {
		return
	}
	files := map[string]*change.File{}
	for _, f := range c.Files {
		files[f.Path()] = f
	}
	whole := map[string]bool{}
	found := map[string][]rawFinding{}
	for i, ch := range chunks {
		for _, path := range ch.paths {
			w, seen := whole[path]
			whole[path] = (!seen || w) && results[i].whole
		}
		if !results[i].whole {
			continue
		}
		for _, f := range results[i].raws {
			f.Path = knownPath(files, f.Path)
			if slices.Contains(ch.paths, f.Path) {
				found[f.Path] = append(found[f.Path], f)
			}
		}
	}
	put := map[string][]byte{}
	for path, ok := range whole {
		key, has := r.keys[path]
		if !ok || !has {
			continue
		}
		data, err := json.Marshal(cachedFile{Findings: append([]rawFinding{}, found[path]...)})
		if err != nil {
			continue
		}
		put[key] = data
	}
	if err := e.cache.Put(ctx, put); err != nil {
		e.log.WarnContext(ctx, "llm: the results could not be kept for the next review", "specialist", e.name, "err", err)
	}
}

// asked is the part of every key of the engine that says who was asked
// what: the specialist and its system prompt, the model and the server's
// host, and promptVersion.
func (e *Engine) asked() []string {
	host := ""
	if u, err := url.Parse(e.cfg.BaseURL); err == nil {
		host = u.Host
	}
	return []string{promptVersion, e.name, e.cfg.Model, host, e.systemPrompt(FormatJSONSchema)}
}

// fileKey is the cache key of file f shown as sections, asked as asked
// says: everything the model's findings on it depend on. It has the lines
// as numbered (a hunk that moved is sent again, so a reused finding's
// lines are still right), the whole head file (a change outside the
// hunks, which the model may see in a whole function, is sent again), and
// the repository's instructions for it, and what the built-in engines
// report on it. ok is false when the head file
// cannot be read: such a file is always sent.
func (e *Engine) fileKey(ctx context.Context, c *change.Change, asked []string, f *change.File, sections []string) (string, bool) {
	content := "deleted"
	if f.Status != change.StatusDeleted {
		data, err := c.ReadFile(ctx, f.Path())
		if err != nil {
			return "", false
		}
		sum := sha256.Sum256(data)
		content = hex.EncodeToString(sum[:])
	}
	h := sha256.New()
	for _, field := range append(slices.Clip(asked), f.Path(), content) {
		writeField(h, field)
	}
	ins := e.instructionsFor(f.Path())
	writeField(h, fmt.Sprint(len(ins)))
	for _, t := range ins {
		writeField(h, t)
	}
	writeField(h, fmt.Sprint(len(sections)))
	for _, s := range sections {
		writeField(h, s)
	}
	// What the model is told the built-in engines report on the file: it
	// does not repeat those, so its results told of one are not those of
	// a review where none reports it (an analyzer turned off, an engine
	// that failed), which would lose the problem. The built-in engines
	// report the same on a file that did not change, but for such a
	// change of their own.
	known := e.board.on([]string{f.Path()})
	writeField(h, fmt.Sprint(len(known)))
	for _, k := range known {
		writeField(h, knownLine(k))
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// writeField writes s with its length first, so that no two lists of
// fields hash alike (a path ending in what a section begins with, say).
func writeField(h hash.Hash, s string) {
	fmt.Fprintf(h, "%d:%s\n", len(s), s)
}
