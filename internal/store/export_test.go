package store

import "context"

// MigrateTo applies the migrations up to version, for tests of a later
// migration on data stored before it.
func (db *DB) MigrateTo(ctx context.Context, version int) (MigrateResult, error) {
	return db.migrate(ctx, version)
}
