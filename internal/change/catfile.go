package change

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// catFileIdle is how long an idle `git cat-file --batch` is kept for the
// next read before it is stopped.
const catFileIdle = 2 * time.Second

// maxSkip is how much of an unwanted object's content is read and thrown
// away to keep the stream in step; beyond it the process is stopped
// instead (a new one starts with the next read).
const maxSkip = 64 << 10

// catFile is a long-lived `git cat-file --batch` that a Local's reads share:
// a review reads hundreds of files, and starting git for each cost more
// than a second of a review (measured by bench/review). Reads are
// serialized; the process stops after catFileIdle without one, and is
// killed when a read's context ends, so nothing outlives its use for long.
type catFile struct {
	mu     sync.Mutex
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *headBuffer
	idle   *time.Timer
	// starts counts processes started, for tests.
	starts int
}

// errAnswer marks an error that git answered in step (a missing path, a
// tree, an object too large): the process stays usable.
type errAnswer struct{ err error }

func (e errAnswer) Error() string { return e.err.Error() }
func (e errAnswer) Unwrap() error { return e.err }

// readBlob returns the content of rev:path, at most limit bytes: more is
// ErrTooLarge, unless prefix asks for the first limit bytes.
func (l *Local) readBlob(ctx context.Context, rev, path string, limit int64, prefix bool) ([]byte, error) {
	b := &l.batch
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if b.idle != nil {
		b.idle.Stop()
	}
	if b.cmd == nil {
		if err := l.startCatFile(); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, l.gitTimeout())
	defer cancel()
	cmd := b.cmd
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	data, err := b.read(rev, path, limit, prefix)
	killed := !stop()
	var answer errAnswer
	switch {
	case killed:
		b.close()
		return nil, fmt.Errorf("git cat-file: %w", ctx.Err())
	case err != nil && !errors.As(err, &answer):
		stderr := b.stderr.String()
		b.close()
		return nil, fmt.Errorf("git cat-file: %w: %s", err, strings.TrimSpace(stderr))
	}
	if b.cmd != nil {
		b.idle = time.AfterFunc(catFileIdle, func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			if b.cmd == cmd {
				b.close()
			}
		})
	}
	if err != nil {
		return nil, answer.err
	}
	return data, nil
}

func (l *Local) startCatFile() error {
	b := &l.batch
	// The process lives across reads, so no read's context may end it;
	// readBlob kills it when a read's context ends.
	cmd := l.command(context.Background(), "cat-file", "--batch")
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	b.stderr = &headBuffer{}
	cmd.Stderr = b.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git cat-file: %w", err)
	}
	b.cmd, b.in, b.out = cmd, in, bufio.NewReaderSize(out, 64<<10)
	b.starts++
	return nil
}

// read asks for one object and reads its answer; the caller holds mu.
func (b *catFile) read(rev, path string, limit int64, prefix bool) ([]byte, error) {
	if _, err := io.WriteString(b.in, rev+":"+path+"\n"); err != nil {
		return nil, err
	}
	header, err := b.out.ReadString('\n')
	if err != nil {
		return nil, err
	}
	header = strings.TrimSuffix(header, "\n")
	if strings.HasSuffix(header, " missing") {
		// The answer repeats the request, path and all: "rev:path missing".
		return nil, errAnswer{fs.ErrNotExist}
	}
	fields := strings.Fields(header)
	if len(fields) != 3 {
		return nil, fmt.Errorf("unexpected answer %q", header)
	}
	size, err := strconv.ParseInt(fields[2], 10, 64)
	if err != nil || size < 0 {
		return nil, fmt.Errorf("unexpected size in %q", header)
	}
	keep := size
	var answer error
	switch {
	case fields[1] != "blob":
		keep, answer = 0, fmt.Errorf("not a file but a %s", fields[1])
	case size > limit && !prefix:
		keep, answer = 0, fmt.Errorf("%d bytes, more than %d: %w", size, limit, ErrTooLarge)
	case size > limit:
		keep = limit
	}
	data := make([]byte, keep)
	if _, err := io.ReadFull(b.out, data); err != nil {
		return nil, err
	}
	// Skip the rest and the newline that ends every answer, or stop the
	// process when that is more than is worth reading.
	if rest := size - keep + 1; rest > maxSkip {
		b.close()
	} else if _, err := io.CopyN(io.Discard, b.out, rest); err != nil {
		return nil, err
	}
	if answer != nil {
		return nil, errAnswer{answer}
	}
	return data, nil
}

// close stops the process; the caller holds mu.
func (b *catFile) close() {
	if b.cmd == nil {
		return
	}
	_ = b.in.Close()
	_ = b.cmd.Process.Kill()
	_ = b.cmd.Wait()
	b.cmd, b.in, b.out = nil, nil, nil
}
