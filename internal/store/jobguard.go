package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"modernc.org/sqlite"
)

// jobGuard is River middleware on every client: on insert it cleans the
// job's arguments, and around each attempt it cleans the error River will
// record (CleanText: a NUL in an error text once made PostgreSQL refuse the
// completion, and River's completer gave up on every later job of the
// process) and logs the failure: WARN for an attempt that will be retried,
// ERROR for a job that gives up (its last attempt, or cancelled), with the
// kind, job id, attempt and error class. River's own lines for these are
// at INFO, invisible at --log-level warn.
type jobGuard struct {
	river.MiddlewareDefaults
	log *slog.Logger
}

// InsertMany cleans the encoded arguments of jobs being inserted.
func (g *jobGuard) InsertMany(ctx context.Context, manyParams []*rivertype.JobInsertParams, doInner func(context.Context) ([]*rivertype.JobInsertResult, error)) ([]*rivertype.JobInsertResult, error) {
	for _, p := range manyParams {
		p.EncodedArgs = cleanJSON(p.EncodedArgs)
	}
	return doInner(ctx)
}

// Work runs the attempt, cleans its error or panic and logs it.
func (g *jobGuard) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			g.logFailure(ctx, job, fmt.Errorf("panic: %v", v), "panic")
			if s, ok := v.(string); ok {
				v = CleanText(s)
			} else if e, ok := v.(error); ok {
				v = cleanError{e}
			}
			panic(v) // River recovers it, with the stack still there
		}
	}()
	err = doInner(ctx)
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*rivertype.JobSnoozeError](err); ok {
		return err
	}
	g.logFailure(ctx, job, err, errorClass(ctx, err))
	if Clean(err.Error()) {
		return err
	}
	return cleanError{err}
}

func (g *jobGuard) logFailure(ctx context.Context, job *rivertype.JobRow, err error, class string) {
	_, cancelled := errors.AsType[*rivertype.JobCancelError](err)
	level, msg := slog.LevelWarn, "job attempt failed; it will be retried"
	switch {
	case class == "stopped":
		level, msg = slog.LevelInfo, "job interrupted (the client is stopping or the job was cancelled)"
	case cancelled:
		level, msg = slog.LevelError, "job cancelled; it will not be retried"
	case job.Attempt >= job.MaxAttempts:
		level, msg = slog.LevelError, "job failed its last attempt; it will not be retried"
	}
	g.log.Log(ctx, level, msg,
		"kind", job.Kind, "job_id", job.ID, "attempt", job.Attempt, "max_attempts", job.MaxAttempts,
		"queue", job.Queue, "error_class", class, "error", CleanText(err.Error()))
}

// errorClass sorts a failure into a few classes an operator can alert on.
func errorClass(ctx context.Context, err error) string {
	if _, ok := errors.AsType[*rivertype.JobCancelError](err); ok && !errors.Is(err, context.DeadlineExceeded) {
		return "cancelled"
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		return "stopped"
	}
	if _, ok := errors.AsType[*pgconn.PgError](err); ok {
		return "database"
	}
	if _, ok := errors.AsType[*sqlite.Error](err); ok {
		return "database"
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return "network"
	}
	return "error"
}

// cleanError is an error whose text is made clean, wrapping the original
// so that River still finds a cancellation in it.
type cleanError struct{ err error }

func (e cleanError) Error() string { return CleanText(e.err.Error()) }
func (e cleanError) Unwrap() error { return e.err }

// cleanJSON returns JSON whose strings hold no NUL and no invalid UTF-8:
// PostgreSQL's jsonb refuses \u0000. Clean JSON is returned unchanged.
func cleanJSON(b []byte) []byte {
	if !strings.Contains(string(b), `\u0000`) && Clean(string(b)) {
		return b
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // ids stay exact
	var v any
	if err := dec.Decode(&v); err != nil {
		return b // River will refuse it with its own error
	}
	out, err := json.Marshal(cleanValue(v))
	if err != nil {
		return b
	}
	return out
}

func cleanValue(v any) any {
	switch x := v.(type) {
	case string:
		return CleanText(x)
	case []any:
		for i := range x {
			x[i] = cleanValue(x[i])
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[CleanText(k)] = cleanValue(e)
		}
		return out
	}
	return v
}
