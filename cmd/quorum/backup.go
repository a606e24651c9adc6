package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/quorum-review/quorum/internal/store"
)

// runBackup copies the embedded SQLite database while serve runs.
func runBackup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c := newCommand("backup", "quorum backup --to FILE [flags]",
		"Copies the embedded SQLite database to FILE while quorum serve keeps reading and\n"+
			"writing it: a consistent snapshot (SQLite's VACUUM INTO), checked, made readable\n"+
			"by its owner only, and named FILE only once complete. FILE must not exist.\n"+
			"To restore, stop serve and put the copy in place as quorum.db in the data directory.\n"+
			"A PostgreSQL database is backed up with pg_dump (docs/operations.md).")
	db := addDBFlags(c, getenv)
	to := c.String("to", "", "", "the file to write the backup to (required; must not exist)")
	if err := c.parse(args, getenv, stdout); err != nil {
		return err
	}
	if *to == "" {
		return usageError{errors.New("backup: --to is required (the file to write the copy to)")}
	}
	if *db.url != "" {
		return usageError{errors.New("backup: --database-url is set: quorum backup copies the embedded SQLite database; back PostgreSQL up with pg_dump (docs/operations.md, \"Backups\")")}
	}
	cfg, err := db.config()
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "quorum: backing up %s to %s…\n", store.SQLitePath(cfg.DataDir), *to)
	info, err := store.BackupSQLite(ctx, cfg.DataDir, *to)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(stdout, "backed up %s to %s: %.1f MB, schema version %d, %d reviews, in %s\n",
		info.From, info.To, float64(info.Bytes)/1e6, info.Schema, info.Reviews, info.Took.Round(1e6))
	return nil
}
