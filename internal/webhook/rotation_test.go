package webhook

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/storetest"
	"github.com/quorum-review/quorum/webhook/verify"
)

// The secrets of the rotation tests: the endpoint's before the rotation,
// and the one it rotates to.
const (
	rotatedFrom = "whsec_cHJldmlvdXMtc2VjcmV0LXByZXZpb3VzLXNlY3JldA=="
	rotatedTo   = "whsec_bmV3LXNlY3JldC1uZXctc2VjcmV0LW5ldy1zZWNyZXQ="
)

// receiverHarness serves the documented verify function of a language over
// HTTP on 127.0.0.1: the path names the secret the receiver holds (as
// argv[1], JSON), the answer is 204 when verify accepts the delivery and
// 401 when it does not; the first line printed is the port.
var receiverHarness = map[string]string{
	"js": `
const http = require("node:http");
const secrets = JSON.parse(process.argv[2]);
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const secret = secrets[req.url];
    res.writeHead(secret !== undefined && verify(secret, req.headers, Buffer.concat(chunks)) ? 204 : 401);
    res.end();
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
`,
	"python": `
import http.server, json, sys

secrets = json.loads(sys.argv[1])

class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        secret = secrets.get(self.path)
        self.send_response(204 if secret is not None and verify(secret, self.headers, body) else 401)
        self.end_headers()

    def log_message(self, *args):
        pass

server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
print(server.server_address[1], flush=True)
server.serve_forever()
`,
}

// docsVerifier is the code block of language lang under the heading
// "### <heading>" of docs/webhooks.md.
func docsVerifier(t *testing.T, heading, lang string) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n### "+heading+"\n")
	if !ok {
		t.Fatalf("docs/webhooks.md has no heading %q", heading)
	}
	_, code, ok := strings.Cut(section, "```"+lang+"\n")
	if !ok {
		t.Fatalf("docs/webhooks.md %q has no %s block", heading, lang)
	}
	code, _, ok = strings.Cut(code, "```")
	if !ok {
		t.Fatalf("docs/webhooks.md %q: unterminated %s block", heading, lang)
	}
	return code
}

// startReceiver runs the documented verifier of docs/webhooks.md under
// heading with the interpreter exe, as an HTTP receiver holding secrets by
// path, and returns its base URL.
func startReceiver(t *testing.T, exe, heading, lang string, secrets map[string]string) string {
	t.Helper()
	path, err := exec.LookPath(exe)
	if err != nil {
		t.Fatalf("the %s verifier of docs/webhooks.md runs on %s: %v", heading, exe, err)
	}
	arg, _ := json.Marshal(secrets)
	cmd := exec.Command(path, "-", string(arg))
	cmd.Stdin = strings.NewReader(docsVerifier(t, heading, lang) + receiverHarness[lang])
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	port, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s receiver: no port: %v", heading, err)
	}
	return "http://127.0.0.1:" + strings.TrimSpace(port)
}

// Across a rotation of an endpoint's secret, every documented verifier —
// package verify, and the Node and Python functions of docs/webhooks.md
// run by their interpreters — accepts real deliveries of the worker with
// the secret the receiver holds exactly while that secret signs: the
// previous one until the overlap ends, the new one from the rotation on.
func TestRotationDocumentedVerifiers(t *testing.T) {
	t.Parallel()
	const overlap = 2 * time.Minute
	// The paths say which secret the receiver behind them holds.
	held := map[string]string{"/previous": rotatedFrom, "/new": rotatedTo}
	goReceiver := receiver(t, func(w http.ResponseWriter, r *http.Request) {
		if _, err := verify.Verify(r, held[r.URL.Path], 5*time.Minute); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
		}
	})
	receivers := map[string]string{
		"Go":     goReceiver.URL,
		"Node":   startReceiver(t, "node", "Node (standard library only)", "js", held),
		"Python": startReceiver(t, "python3", "Python (standard library only)", "python", held),
	}
	storetest.ForEach(t, func(t *testing.T, b storetest.Backend) {
		bd := setup(t, b)
		// The documented verifiers read the real clock for the
		// timestamp's tolerance: the worker's starts at it.
		bd.clock = storetest.NewClock(time.Now())
		bd.w.Now = bd.clock.Now
		type receiverOf struct{ lang, holds string }
		endpoints := map[string]receiverOf{}
		for lang, url := range receivers {
			for path := range held {
				endpoints[bd.endpoint(t, bd.account, url+path, rotatedFrom)] = receiverOf{lang, path}
			}
		}
		// deliver sends one event to every endpoint and checks which
		// receivers accepted it.
		deliver := func(phase string, accepts map[string]bool) {
			t.Helper()
			for hook, d := range bd.record(t, bd.account) {
				rcv := endpoints[hook]
				_ = bd.work(t, d, 1) // a rejection is an error; the attempt says which
				_, attempts := bd.delivery(t, d)
				if len(attempts) != 1 || attempts[0].StatusCode == nil {
					t.Fatalf("%s: %s receiver holding the %s secret: attempts %+v", phase, rcv.lang, rcv.holds, attempts)
				}
				code := *attempts[0].StatusCode
				if got, want := code/100 == 2, accepts[rcv.holds]; got != want {
					t.Errorf("%s: %s receiver holding the %s secret answered %d %s, want accepted %v",
						phase, rcv.lang, strings.TrimPrefix(rcv.holds, "/"), code, strings.TrimSpace(attempts[0].ResponseBody), want)
				}
			}
		}

		deliver("before the rotation", map[string]bool{"/previous": true, "/new": false})
		for hook := range endpoints {
			secret := rotatedTo
			if _, _, err := RotateSecret(t.Context(), bd.db.Writer(), bd.account, hook, &secret, overlap, bd.clock.Now()); err != nil {
				t.Fatal(err)
			}
		}
		deliver("right after the rotation", map[string]bool{"/previous": true, "/new": true})
		bd.clock.Advance(overlap - time.Second)
		deliver("at the overlap's last second", map[string]bool{"/previous": true, "/new": true})
		bd.clock.Advance(time.Second)
		deliver("when the overlap has ended", map[string]bool{"/previous": false, "/new": true})
	})
}
