package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a server running as a child process.
type child struct {
	name string
	cmd  *exec.Cmd
	base string // http://127.0.0.1:PORT
	done chan error

	stderr *prefixed

	mu     sync.Mutex
	rssMax int64 // highest VmRSS sampled, kB
}

var servingLine = regexp.MustCompile(`serving on (http://[^ ]+)`)

// startChild runs bin with args, waits for it to print "… serving on
// http://ADDR …" on stdout, and returns it. Its stderr goes to ours.
func startChild(ctx context.Context, name, bin string, args []string, env []string) (*child, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr := &prefixed{w: os.Stderr, prefix: name + ": "}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan error, 1), stderr: stderr}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil && !sent {
				found <- m[1]
				sent = true
			}
		}
		io.Copy(io.Discard, out)
	}()
	go func() { c.done <- cmd.Wait() }()
	select {
	case c.base = <-found:
	case err := <-c.done:
		return nil, fmt.Errorf("%s exited before serving: %v", name, err)
	case <-time.After(2 * time.Minute):
		c.stop()
		return nil, fmt.Errorf("%s did not start serving within 2 minutes", name)
	case <-ctx.Done():
		c.stop()
		return nil, ctx.Err()
	}
	if err := loopbackOnly(c.base); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// stop asks the child to stop (SIGTERM) and waits up to 30 s before killing it.
func (c *child) stop() error {
	if c.cmd.Process == nil {
		return nil
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-c.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) && !ee.Exited() {
			return nil // ended by the signal
		}
		return err
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		return fmt.Errorf("%s did not stop within 30 s; killed", c.name)
	}
}

// status reads a kB field (VmRSS, VmHWM) of the child's /proc/PID/status.
func (c *child) status(field string) (int64, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(c.cmd.Process.Pid), "status"))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				return strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, c.cmd.Process.Pid)
}

// cpu is the child's user+system CPU time so far, from /proc/PID/stat.
func (c *child) cpu() time.Duration {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(c.cmd.Process.Pid), "stat"))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	_, rest, ok := strings.Cut(string(b), ") ")
	if !ok {
		return 0
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is USER_HZ, 100 on every Linux platform Go supports.
const clockTicks = 100

// sampleRSS records the child's VmRSS every 100 ms until ctx ends.
func (c *child) sampleRSS(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		if kb, err := c.status("VmRSS"); err == nil {
			c.mu.Lock()
			c.rssMax = max(c.rssMax, kb)
			c.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (c *child) maxRSS() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rssMax
}

type prefixed struct {
	w      io.Writer
	prefix string
	mu     sync.Mutex
	line   []byte
	// dropped counts log lines about requests the load generator abandoned
	// at the end of a timed run ("context canceled"): not shown.
	dropped int
}

func (p *prefixed) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line = append(p.line, b...)
	for {
		i := strings.IndexByte(string(p.line), '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(p.line[:i+1])
		p.line = p.line[i+1:]
		if strings.Contains(line, "context canceled") {
			p.dropped++
			continue
		}
		if _, err := io.WriteString(p.w, p.prefix+line); err != nil {
			return 0, err
		}
	}
}

func (p *prefixed) droppedLines() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

// The baseline: a bare net/http server that answers every GET with a fixed
// body read from a file, chosen by path. It runs as a child process of this
// command (the bench binary re-executed with the "baseline" argument), so it
// competes for the CPUs exactly as the quorum server does.

const baselineArg = "__baseline"

// runBaseline serves files: each argument is "PATH=FILE".
func runBaseline(args []string) error {
	bodies := map[string][]byte{}
	for _, a := range args {
		path, file, ok := strings.Cut(a, "=")
		if !ok {
			return fmt.Errorf("baseline: want PATH=FILE, got %q", a)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		bodies[path] = b
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	fmt.Printf("baseline serving on http://%s\n", ln.Addr())
	return http.Serve(ln, h)
}
