// Package llmcache keeps the LLM engine's results per file in the
// service's database (table llm_file_results), so that serve does not send
// a model a file it was already shown, exactly so, at an earlier head of
// the same repository. The engine (internal/llm) makes the keys and the
// results and checks a result again before using it; this package only
// stores them, per repository, and keeps the table small.
package llmcache

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quorum-review/quorum/internal/store"
)

// MaxAge is how long a result is kept: a pull request pushed again after a
// month is reviewed afresh, and a repository no longer reviewed leaves
// nothing behind for long.
const MaxAge = 30 * 24 * time.Hour

// MaxPerRepository bounds one repository's rows; past it the oldest go.
// A row is one file of one specialist's review (a few hundred bytes to a
// few kilobytes), so this is some megabytes per repository at most.
const MaxPerRepository = 20000

// Store is the cache of one database.
type Store struct {
	db  *store.DB
	now func() time.Time
	// maxAge and maxRows are MaxAge and MaxPerRepository, smaller in
	// tests.
	maxAge  time.Duration
	maxRows int
}

// New returns the cache kept in db, on the clock now (time.Now when nil).
func New(db *store.DB, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, now: now, maxAge: MaxAge, maxRows: MaxPerRepository}
}

// For returns the cache of one repository of one account: what it stores
// only it reads.
func (s *Store) For(accountID, repositoryID string) *Scope {
	return &Scope{s: s, account: accountID, repository: repositoryID}
}

// Scope is the cache of one repository; it is an llm.ResultCache.
type Scope struct {
	s                   *Store
	account, repository string
}

const (
	getResult = `SELECT result FROM llm_file_results WHERE repository_id = $1 AND account_id = $2 AND key = $3 AND created_at > $4`
	putResult = `INSERT INTO llm_file_results (account_id, repository_id, key, result, created_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (repository_id, key) DO UPDATE SET result = excluded.result, created_at = excluded.created_at`
	// pruneRepository deletes the repository's rows older than its
	// MaxPerRepository-th newest; with fewer rows the subquery is NULL and
	// nothing goes.
	pruneRepository = `DELETE FROM llm_file_results WHERE repository_id = $1 AND created_at < (
    SELECT created_at FROM llm_file_results WHERE repository_id = $1 ORDER BY created_at DESC LIMIT 1 OFFSET $2)`
	pruneOld = `DELETE FROM llm_file_results WHERE created_at <= $1`
)

// Get returns the results stored under keys, by key; a key without one
// (or with one older than MaxAge) is absent.
func (sc *Scope) Get(ctx context.Context, keys []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	oldest := store.Micros(sc.s.now().Add(-sc.s.maxAge))
	for _, k := range keys {
		var result string
		err := sc.s.db.Reader().QueryRow(ctx, getResult, sc.repository, sc.account, k, oldest).Scan(&result)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read LLM results: %w", err)
		}
		out[k] = []byte(result)
	}
	return out, nil
}

// Put stores results by key, and forgets what is past MaxAge (in every
// repository: the table is pruned as it is written) and the repository's
// rows past MaxPerRepository.
func (sc *Scope) Put(ctx context.Context, results map[string][]byte) error {
	if len(results) == 0 {
		return nil
	}
	now := sc.s.now()
	err := sc.s.db.InTx(ctx, func(tx store.Tx) error {
		for k, r := range results {
			if _, err := tx.Exec(ctx, putResult, sc.account, sc.repository, k, string(r), store.Micros(now)); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, pruneRepository, sc.repository, sc.s.maxRows-1); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, pruneOld, store.Micros(now.Add(-sc.s.maxAge)))
		return err
	})
	if err != nil {
		return fmt.Errorf("store LLM results: %w", err)
	}
	return nil
}
