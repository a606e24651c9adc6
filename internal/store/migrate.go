package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Migration is one numbered schema change.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations lists the embedded schema changes in order.
func Migrations() []Migration {
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		panic(err) // embedded at build time: cannot fail
	}
	var ms []Migration
	for _, e := range entries {
		name := e.Name()
		num, rest, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(name, ".sql") {
			panic("store: badly named migration " + name)
		}
		body, err := migrationFS.ReadFile(path.Join("migrations", name))
		if err != nil {
			panic(err)
		}
		ms = append(ms, Migration{Version: v, Name: strings.TrimSuffix(rest, ".sql"), SQL: string(body)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms
}

// LatestVersion is the newest schema version this binary knows.
func LatestVersion() int {
	ms := Migrations()
	return ms[len(ms)-1].Version
}

// ErrSchemaNewer means the database was migrated by a newer quorum.
var ErrSchemaNewer = errors.New("database schema is newer than this binary")

// ErrSchemaBehind means migrations are pending.
var ErrSchemaBehind = errors.New("database schema is not current: run quorum migrate")

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS quorum_migrations (
    version    BIGINT PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at BIGINT NOT NULL
)`

// migrationLockClass and the schema's name key the PostgreSQL advisory lock
// that serializes replicas migrating at the same time. Replicas share a
// schema; deployments (and test databases) in other schemas of the same
// database need not wait for each other.
const migrationLockClass = 0x71756f72 // "quor"

// MigrateResult says what a migration run did.
type MigrateResult struct {
	// Applied lists quorum's versions applied now.
	Applied []Migration
	// RiverApplied lists River's schema versions applied now.
	RiverApplied []int
}

// Migrate applies River's and quorum's pending migrations in one
// transaction, so a failure leaves the schema as it was. Running it again is
// a no-op. It refuses a schema newer than this binary.
func (db *DB) Migrate(ctx context.Context) (MigrateResult, error) {
	return db.migrate(ctx, LatestVersion())
}

// migrate applies the pending migrations up to version upTo; tests stop
// short of the latest to store data as an older quorum did.
func (db *DB) migrate(ctx context.Context, upTo int) (MigrateResult, error) {
	var res MigrateResult
	now := Micros(time.Now())
	err := db.migrateTx(ctx, func(q Querier, riverUp func() ([]int, error)) error {
		if _, err := q.Exec(ctx, createMigrationsTable); err != nil {
			return fmt.Errorf("create migrations table: %w", err)
		}
		current, err := currentVersion(ctx, q)
		if err != nil {
			return err
		}
		if current > LatestVersion() {
			return fmt.Errorf("%w (database at %d, binary knows %d)", ErrSchemaNewer, current, LatestVersion())
		}
		if res.RiverApplied, err = riverUp(); err != nil {
			return fmt.Errorf("river migrations: %w", err)
		}
		for _, m := range Migrations() {
			if m.Version <= current || m.Version > upTo {
				continue
			}
			for _, stmt := range splitStatements(m.SQL) {
				if _, err := q.Exec(ctx, stmt); err != nil {
					return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
				}
			}
			if _, err := q.Exec(ctx, `INSERT INTO quorum_migrations (version, name, applied_at) VALUES ($1, $2, $3)`, m.Version, m.Name, now); err != nil {
				return fmt.Errorf("record migration %d: %w", m.Version, err)
			}
			res.Applied = append(res.Applied, m)
		}
		return ensureSettings(ctx, q)
	})
	return res, err
}

// migrateTx runs fn in the migration transaction; fn calls riverUp to apply
// River's migrations. On PostgreSQL River's migrations cannot share one
// transaction (one adds an enum value and uses it), so there a session
// advisory lock serializes replicas and River migrates before fn's
// transaction begins.
func (db *DB) migrateTx(ctx context.Context, fn func(q Querier, riverUp func() ([]int, error)) error) error {
	if db.pool != nil {
		conn, err := db.pool.Acquire(ctx)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		defer conn.Release()
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext(coalesce(current_schema(), '')))`, int32(migrationLockClass)); err != nil {
			return fmt.Errorf("lock for migration: %w", err)
		}
		defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, hashtext(coalesce(current_schema(), '')))`, int32(migrationLockClass))
		// Refuse a newer schema before River's migrations touch anything.
		q := pgxQuerier{conn}
		if _, err := q.Exec(ctx, createMigrationsTable); err != nil {
			return fmt.Errorf("create migrations table: %w", err)
		}
		if current, err := currentVersion(ctx, q); err != nil {
			return err
		} else if current > LatestVersion() {
			return fmt.Errorf("%w (database at %d, binary knows %d)", ErrSchemaNewer, current, LatestVersion())
		}
		m, err := rivermigrate.New(riverpgxv5.New(db.pool), nil)
		if err != nil {
			return err
		}
		r, riverErr := m.Migrate(ctx, rivermigrate.DirectionUp, nil)
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			return fn(pgxQuerier{tx}, func() ([]int, error) { return riverVersions(r), riverErr })
		})
	}
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	err = fn(sqlQuerier{tx}, func() ([]int, error) {
		m, err := rivermigrate.New(riversqlite.New(db.write), nil)
		if err != nil {
			return nil, err
		}
		r, err := m.MigrateTx(ctx, tx, rivermigrate.DirectionUp, nil)
		return riverVersions(r), err
	})
	if err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func riverVersions(r *rivermigrate.MigrateResult) []int {
	if r == nil {
		return nil
	}
	vs := make([]int, 0, len(r.Versions))
	for _, v := range r.Versions {
		vs = append(vs, v.Version)
	}
	return vs
}

func currentVersion(ctx context.Context, q Querier) (int, error) {
	var v sql.NullInt64
	if err := q.QueryRow(ctx, `SELECT MAX(version) FROM quorum_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return int(v.Int64), nil
}

// CheckSchema reports whether quorum's and River's schemas are current:
// ErrSchemaBehind, ErrSchemaNewer or nil.
func (db *DB) CheckSchema(ctx context.Context) error {
	var v sql.NullInt64
	err := db.Reader().QueryRow(ctx, `SELECT MAX(version) FROM quorum_migrations`).Scan(&v)
	if err != nil {
		// No migrations table: a new database.
		return fmt.Errorf("%w (%v)", ErrSchemaBehind, err)
	}
	switch latest := LatestVersion(); {
	case int(v.Int64) > latest:
		return fmt.Errorf("%w (database at %d, binary knows %d)", ErrSchemaNewer, v.Int64, latest)
	case int(v.Int64) < latest:
		return fmt.Errorf("%w (database at %d, binary knows %d)", ErrSchemaBehind, v.Int64, latest)
	}
	var res *rivermigrate.ValidateResult
	if db.pool != nil {
		m, err := rivermigrate.New(riverpgxv5.New(db.pool), nil)
		if err != nil {
			return err
		}
		res, err = m.Validate(ctx, nil)
		if err != nil {
			return fmt.Errorf("validate river schema: %w", err)
		}
	} else {
		m, err := rivermigrate.New(riversqlite.New(db.read), nil)
		if err != nil {
			return err
		}
		res, err = m.Validate(ctx, nil)
		if err != nil {
			return fmt.Errorf("validate river schema: %w", err)
		}
	}
	if !res.OK {
		return fmt.Errorf("%w (river: %s)", ErrSchemaBehind, strings.Join(res.Messages, "; "))
	}
	return nil
}

// Statements are the migration's SQL statements, in order.
func (m Migration) Statements() []string { return splitStatements(m.SQL) }

// splitStatements splits a migration file on semicolons that end a line.
// Migrations hold no semicolons inside literals or bodies.
func splitStatements(src string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			if s := strings.TrimSpace(cur.String()); s != ";" {
				out = append(out, strings.TrimSpace(strings.TrimSuffix(s, ";")))
			}
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// Setting keys.
const (
	// SettingCursorKey is the hex HMAC key that seals pagination cursors.
	SettingCursorKey = "cursor_key"
)

func ensureSettings(ctx context.Context, q Querier) error {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, SettingCursorKey, hex.EncodeToString(key))
	if err != nil {
		return fmt.Errorf("create instance settings: %w", err)
	}
	return nil
}

// Setting reads an instance setting.
func (db *DB) Setting(ctx context.Context, key string) (string, error) {
	var v string
	if err := db.Reader().QueryRow(ctx, `SELECT value FROM settings WHERE key = $1`, key).Scan(&v); err != nil {
		return "", fmt.Errorf("read setting %s: %w", key, err)
	}
	return v, nil
}
