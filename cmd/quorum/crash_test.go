package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/event"
	"github.com/quorum-review/quorum/internal/gitea/giteatest"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/webhook/verify"
)

// crashDeliveries is how many deliveries the crash test makes.
const crashDeliveries = 1000

// crashReceiver records every delivery it is sent, answering 200 after a
// short, bounded pause, like a slow receiver.
type crashReceiver struct {
	mu       sync.Mutex
	seen     map[string]int // delivery_id → requests received
	requests int
	problems []string // header and body disagreeing, unreadable bodies
}

func (rc *crashReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var env struct {
		DeliveryID string `json:"delivery_id"`
	}
	if err == nil {
		err = json.Unmarshal(body, &env)
	}
	header := r.Header.Get(verify.HeaderDelivery)
	rc.mu.Lock()
	switch {
	case err != nil:
		rc.problems = append(rc.problems, "unreadable delivery: "+err.Error())
	case env.DeliveryID == "" || env.DeliveryID != header:
		rc.problems = append(rc.problems, "body delivery_id "+env.DeliveryID+" but "+verify.HeaderDelivery+" "+header)
	default:
		rc.seen[env.DeliveryID]++
	}
	rc.requests++
	rc.mu.Unlock()
	time.Sleep(time.Duration(5+rand.IntN(16)) * time.Millisecond) // the slow receiver: 5–20 ms
	w.WriteHeader(http.StatusOK)
}

// received returns how many distinct deliveries and requests arrived.
func (rc *crashReceiver) received() (distinct, requests int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.seen), rc.requests
}

// child is one `quorum serve` process.
type child struct {
	cmd    *exec.Cmd
	base   string
	stderr *syncBuffer
	done   chan struct{} // closed when the process has exited and been reaped
}

// built is this command's binary, built once for the tests that run it as
// a process, and removed by TestMain.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// buildQuorum builds this command's binary once for all the tests that
// ask, with the race detector when this test binary has it: its packages
// are then in the build cache already, and only the command itself is
// compiled and linked (a normal build beside a race one compiled every
// dependency twice, most of the suite's time on an empty cache). It is
// stamped with the version control information (-buildvcs=true: the
// machine's GOFLAGS may turn stamping off; a release build is made with
// it on, docs/operations.md), which TestVersionFromBuildInfo reads.
func buildQuorum(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "quorum-test-bin-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "quorum")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		args := append([]string{"build", "-buildvcs=true"}, raceFlags...)
		built.out, built.err = exec.CommandContext(ctx, "go", append(args, "-o", built.bin, ".")...).CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	flag.Parse()
	waitersInFlight()
	// giteatest.Run stops the Gitea the end-to-end test starts.
	code := giteatest.Run(m)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// waitersInFlight lets more of this package's tests run at once than go
// test's default (-parallel = GOMAXPROCS, 2 on a 2-core machine), unless
// -parallel was given. Many of them spend most of their time waiting, not
// computing: on River's rescuer (TestCrashSafety's two halves idle 30–60 s
// each after the kill), on deliveries to slow receivers, on quorum serve,
// Gitea, Chromium and the model server, which run as processes of their
// own. Two such tests held both slots while the cores had work to spare.
func waitersInFlight() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
}

// startChild runs `quorum serve` and waits until /healthz answers. The
// child's environment has no QUORUM_ variables, so only its flags count.
func startChild(t *testing.T, bin string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "QUORUM_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stdout) // keep reading until the process exits
		cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() { c.stop(t) })
	timeout := time.After(30 * time.Second)
	select {
	case c.base = <-urls:
	case <-c.done:
		t.Fatalf("quorum serve exited early: %v; stderr:\n%s", cmd.ProcessState, c.stderr.String())
	case <-timeout:
		t.Fatalf("quorum serve printed no address within 30 s; stderr:\n%s", c.stderr.String())
	}
	for {
		resp, err := http.Get(c.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return c
			}
		}
		select {
		case <-c.done:
			t.Fatalf("quorum serve exited early: %v; stderr:\n%s", cmd.ProcessState, c.stderr.String())
		case <-timeout:
			t.Fatalf("quorum serve not healthy within 30 s; stderr:\n%s", c.stderr.String())
		case <-time.After(20 * time.Millisecond): // polling for readiness
		}
	}
}

// kill ends the process with SIGKILL, as a crash would, and reaps it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Fatal("killed process not reaped within 10 s")
	}
}

// stop asks the process to stop (SIGINT) and kills it if it has not
// within 30 s. Nothing is left running.
func (c *child) stop(t *testing.T) {
	select {
	case <-c.done:
		return
	default:
	}
	c.cmd.Process.Signal(os.Interrupt)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		t.Errorf("quorum serve did not stop within 30 s of SIGINT; killing it")
		c.cmd.Process.Kill()
		<-c.done
	}
}

// TestCrashSafety starts `quorum serve` as a real process, on SQLite and on
// PostgreSQL, has it deliver 1,000 webhooks to a slow receiver, kills it
// with SIGKILL mid-stream and starts it again on the same database: every
// delivery arrives at least once, with its original delivery_id, and none
// is left pending.
//
// Its length is set by River, not the test: a job killed mid-attempt is
// rescued once its own Timeout (attempt timeout + 30 s) has passed, at the
// rescuer's next run (every 30 s); the lost attempt is then made again at
// once, not after the first retry delay, as it never failed. So the
// restarted server finishes 30–60 s after the kill.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs quorum serve for about a minute")
	}
	t.Parallel()
	start := time.Now()
	bin := buildQuorum(t)
	t.Logf("built quorum in %s", time.Since(start).Round(time.Millisecond))
	for _, target := range storetest.Targets() {
		t.Run(target.Name, func(t *testing.T) {
			t.Parallel()
			crashSafety(t, bin, target.Config(t))
		})
	}
}

// dbArgs are the flags that open cfg's database.
func dbArgs(cfg store.Config) []string {
	if cfg.URL != "" {
		return []string{"--database-url", cfg.URL}
	}
	return []string{"--data-dir", cfg.DataDir}
}

func crashSafety(t *testing.T, bin string, cfg store.Config) {
	start := time.Now()
	rc := &crashReceiver{seen: map[string]int{}}
	receiver := httptest.NewServer(rc)
	t.Cleanup(receiver.Close)

	args := append(dbArgs(cfg), "--addr", "127.0.0.1:0", "--webhook-allow-private", "--webhook-timeout", "1s",
		"--job-rescue-after", "2s", "--workers", "20", "--log-level", "warn", "--shutdown-timeout", "10s")
	tokOut, tokErr, err := quorum(t, env(), append([]string{"token", "create", "--account", "acme", "--scope", "webhooks:write", "--name", "crash"}, dbArgs(cfg)...)...)
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, tokErr)
	}
	tok := strings.TrimSpace(tokOut)
	srv := startChild(t, bin, args...)

	hook := createEndpoint(t, srv.base, tok, receiver.URL)

	// Record the events from a second process's view of the database, as
	// the review pipeline would: each fans out to one delivery.
	ctx := context.Background()
	db, accountID := insertOnly(t, cfg, hook.ID)
	recordEvents(t, db, accountID, 0, crashDeliveries)
	created := map[string]bool{}
	rows, err := db.Reader().Query(ctx, `SELECT id FROM webhook_deliveries WHERE endpoint_id = $1`, hook.ID)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		created[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(created) != crashDeliveries {
		t.Fatalf("%d deliveries created, want %d", len(created), crashDeliveries)
	}

	// Kill the server mid-stream: some deliveries made, most not.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if n, _ := rc.received(); n >= crashDeliveries/10 {
			break
		}
		if time.Now().After(deadline) {
			n, _ := rc.received()
			t.Fatalf("only %d deliveries within 30 s; stderr:\n%s", n, srv.stderr.String())
		}
		time.Sleep(5 * time.Millisecond) // polling the receiver
	}
	srv.kill(t)
	killedAt := time.Now()
	before, _ := rc.received()
	if before >= crashDeliveries {
		t.Fatalf("all %d deliveries were made before the kill: nothing was cut short", before)
	}
	var running, pending int
	if err := db.Reader().QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'webhook.deliver' AND state = 'running'`).Scan(&running); err != nil {
		t.Fatal(err)
	}
	if err := db.Reader().QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'failed')`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed after %d of %d deliveries were received; %d jobs left running, %d deliveries pending", before, crashDeliveries, running, pending)
	if running == 0 {
		t.Errorf("no delivery job was running at the kill: the rescue of a lost attempt is untested")
	}

	// Restart on the same database; everything is delivered.
	srv = startChild(t, bin, args...)
	awaitDeliveries(t, db, rc, crashDeliveries, 150*time.Second, srv)
	srv.stop(t)
	if t.Failed() {
		return
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, p := range rc.problems {
		t.Error(p)
	}
	dups := 0
	for id, n := range rc.seen {
		if !created[id] {
			t.Errorf("received delivery_id %s, which is none of the created deliveries", id)
		}
		dups += n - 1
	}
	for id := range created {
		if rc.seen[id] == 0 {
			t.Errorf("delivery %s never received", id)
		}
	}
	var succeeded int
	if err := db.Reader().QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'succeeded'`, hook.ID).Scan(&succeeded); err != nil {
		t.Fatal(err)
	}
	if succeeded != crashDeliveries {
		t.Errorf("%d deliveries succeeded, want %d", succeeded, crashDeliveries)
	}
	t.Logf("all %d delivered %s after the kill (%d requests, %d repeated an id); test took %s",
		crashDeliveries, time.Since(killedAt).Round(time.Millisecond), rc.requests, dups, time.Since(start).Round(time.Millisecond))
}

// createEndpoint registers url as an endpoint for every event through the
// API of the server at base.
func createEndpoint(t *testing.T, base, tok, url string) (hook struct {
	ID string `json:"id"`
}) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/webhooks", strings.NewReader(`{"url":"`+url+`","description":"`+t.Name()+`"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&hook)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated || hook.ID == "" {
		t.Fatalf("POST /v1/webhooks: %d %+v (%v)", resp.StatusCode, hook, err)
	}
	return hook
}

// insertOnly opens cfg's database with an insert-only job client, as a
// process that records events would, and returns the account of the
// endpoint.
func insertOnly(t *testing.T, cfg store.Config, endpointID string) (*store.DB, string) {
	t.Helper()
	db := storetest.OpenUnmigrated(t, cfg)
	if _, err := db.ConfigureJobs(store.JobsConfig{}); err != nil {
		t.Fatal(err)
	}
	var accountID string
	if err := db.Reader().QueryRow(context.Background(), `SELECT account_id FROM webhook_endpoints WHERE id = $1`, endpointID).Scan(&accountID); err != nil {
		t.Fatal(err)
	}
	return db, accountID
}

// awaitDeliveries waits until the receiver has had n distinct deliveries
// and none is left pending or failed, and fails the test after within.
func awaitDeliveries(t *testing.T, db *store.DB, rc *crashReceiver, n int, within time.Duration, procs ...*child) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got, _ := rc.received()
		var pending int
		if err := db.Reader().QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'failed')`).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if got >= n && pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			var stderr strings.Builder
			for _, p := range procs {
				stderr.WriteString(p.stderr.String())
			}
			t.Fatalf("after %s: %d of %d deliveries received, %d pending or failed; stderr:\n%s", within, got, n, pending, stderr.String())
		}
		time.Sleep(50 * time.Millisecond) // polling the receiver and the database
	}
}

// recordEvents records review.failed for PRs from+1 … to in one
// transaction.
func recordEvents(t *testing.T, db *store.DB, accountID string, from, to int) {
	t.Helper()
	ctx := context.Background()
	err := db.InTx(ctx, func(tx store.Tx) error {
		for i := from; i < to; i++ {
			data := event.ReviewFailedData{Owner: "acme", Repo: "app", PRNumber: i + 1, Reason: event.ReasonRateLimit}
			if _, err := event.Record(ctx, tx, accountID, event.ReviewFailed, data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
