package polyglot

import (
	"slices"
	"testing"

	"github.com/quorum-review/quorum/internal/specialist"
)

// Every rule of the table is known, of a specialist that takes it, with a
// category and severity the API knows; the rules measured as noise are off.
func TestRuleTableIsWellFormed(t *testing.T) {
	t.Parallel()
	for id, r := range rules {
		if !Known(id) {
			t.Errorf("%s is in the table but not Known", id)
		}
		if _, ok := family(id); !ok {
			t.Errorf("%s does not match its analyzer's rule ids", id)
		}
		if !slices.Contains([]string{specialist.Logic, specialist.Security, specialist.Performance}, r.Specialist) ||
			!slices.Contains(specialist.Categories, r.Category) || specialist.SeverityRank(r.Severity) < 0 {
			t.Errorf("%s: %+v", id, r)
		}
	}
	for _, id := range []string{"ruff:S311", "ruff:PERF401", "oxlint:eslint/no-unused-vars", "shellcheck:SC2034", "hadolint:DL3059", "hadolint:SC2086", "hadolint:DL3008"} {
		if r, ok := lookup(id); !ok || r.On {
			t.Errorf("%s: known %v, on %v; want known and off", id, ok, r.On)
		}
	}
	for _, id := range []string{"ruff:X1", "pylint:W0611", "oxlint:no-unused-vars", "shellcheck:2086", "ruff", ""} {
		if Known(id) {
			t.Errorf("%q is Known", id)
		}
	}
}

func TestRepositoryRulesTurnRulesOnAndOff(t *testing.T) {
	t.Parallel()
	s608, _ := lookup("ruff:S608")
	s311, _ := lookup("ruff:S311")
	for _, tc := range []struct {
		rs    specialist.Rules
		id    string
		r     Rule
		want  bool
		about string
	}{
		{specialist.Rules{}, "ruff:S608", s608, true, "on by default"},
		{specialist.Rules{}, "ruff:S311", s311, false, "off by default"},
		{specialist.Rules{Enable: []string{"ruff:S311"}}, "ruff:S311", s311, true, "enabled"},
		{specialist.Rules{Disable: []string{"ruff:S608"}}, "ruff:S608", s608, false, "disabled"},
		{specialist.Rules{Enable: []string{"ruff:S608"}, Disable: []string{"ruff:S608"}}, "ruff:S608", s608, false, "disable wins"},
	} {
		if got := on(tc.rs, tc.id, tc.r); got != tc.want {
			t.Errorf("%s: on = %v", tc.about, got)
		}
	}
}

// The rules kept only in some places keep what a reviewer would post.
func TestKeepDecidesByTheLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rule, message, line string
		want                bool
	}{
		{"shellcheck:SC2086", "", `rm -rf $dir/cache`, true},
		{"shellcheck:SC2086", "", `echo $dir`, false},
		{"shellcheck:SC2086", "", `local version=$(grep "${plugin_name} " $file_path)`, true},
		{"shellcheck:SC2086", "", `source $script`, true},
		{"shellcheck:SC2086", "", `cp $1 /tmp`, true},
		{"shellcheck:SC2086", "", `docker pull $SENTRY_IMAGE || true`, false},
		{"shellcheck:SC2086", "", `docker login --username ${DOCKERHUB_USERNAME} --password ${DOCKERHUB_PASSWORD}`, false},
		{"shellcheck:SC2086", "", `openssl dhparam -out dh.pem $DH_KEY_SIZE`, false},
		{"shellcheck:SC2068", "", `exec $@`, true},
		{"shellcheck:SC2068", "", `  echo $@`, false},
		{"ruff:S602", "`subprocess` call with `shell=True` identified, security issue", "", true},
		{"ruff:S602", "`subprocess` call with `shell=True` seems safe, but may be changed in the future; consider rewriting without `shell`", "", false},
		{"hadolint:DL4006", "", "RUN set -x \\\n  && curl -fsSL https://x | tar xz", true},
		{"hadolint:DL4006", "", "RUN ls | sort", false},
		{"ruff:S608", "", `    return db.execute("SELECT * FROM users WHERE name = '%s'" % name)`, true},
		{"ruff:S608", "", "    cur.execute(\n        \"DELETE FROM t WHERE id = %s\" % n", true},
		{"ruff:S608", "", `    query = "SELECT * FROM %s" % table`, true},
		{"ruff:S608", "", `    output = inject.checkBooleanExpression("(SELECT VERSION FROM V) LIKE '%d%%'" % number)`, false},
		{"ruff:S608", "", `    log.info("SELECT took %d ms" % ms)`, false},
		{"ruff:S608", "", "        sql=\"SELECT value FROM documents WHERE id in ({seq})\".format(\n            seq=','.join(['?']*len(idxs))\n        )", false},
		{"shellcheck:SC2086", "", `if ! grep -q sbin <<< $PATH; then`, false},
		{"hadolint:DL4006", "", "RUN curl -fsSL $URL -o a.war \\\n  && echo \"$SHA  a.war\" | sha256sum -c -", false},
		{"hadolint:DL4006", "", "RUN make -j4 | tee build.log", true},
		{"hadolint:DL4006", "", "RUN set -eux; \\\n  ./configure && npm run build | grep -v warning", true},
		{"hadolint:DL4006", "", "RUN dpkgArch=\"$(dpkg --print-architecture | awk -F- '{ print $NF }')\"", false},
		{"hadolint:DL4006", "", "RUN case \"$arch\" in \\\n  amd64|arm64) echo ok ;; \\\n esac", false},
		{"hadolint:DL4006", "", "RUN yes | /usr/share/postgresql-common/pgdg/apt.postgresql.org.sh", false},
		{"hadolint:DL4006", "", "RUN set -eux; \\\n\trunDeps=\"$( \\\n\t\tscanelf --needed --nobanner --recursive /usr/local/bundle \\\n\t\t\t| tr ',' '\\n' \\\n\t)\"; \\\n\tapk add $runDeps", true},
		{"hadolint:DL4006", "", "RUN apk add --no-cache \\\n    curl \\\n    git", false},
		{"hadolint:DL3014", "", "RUN apt-get update && apt-get install curl", true},
		{"hadolint:DL3014", "", "RUN apt-get update \\\n && apt-get remove --purge \\\n  curl", true},
		{"hadolint:DL3014", "", "RUN apt-get update && apt-get install -y --no-install-recommends curl", false},
		{"hadolint:DL3014", "", "RUN set -ex; \\\n  apt-get build-dep -y postgresql; \\\n  apt-get source --compile postgresql", false},
		{"hadolint:DL3014", "", "RUN apt-get -qqy install curl", false},
		{"shellcheck:SC2086", "", "    repository_target=`readlink -f $repository_target`", true},
		{"shellcheck:SC2086", "", `mkisofs -R -V config-2 -o $CONFIGDRIVE_FILE $WORKDIR`, true},
		{"hadolint:DL3020", "", "ADD . /go/src/miga", true},
		{"hadolint:DL3020", "", "ADD --chown=app ./ /src", true},
		{"hadolint:DL3020", "", "ADD requirements.txt ./", false},
		{"hadolint:DL3020", "", "ADD cache/ ./cache", false},
		{"shellcheck:SC2086", "", `rm -rf $PLUGIN_NAME/`, true},
		{"shellcheck:SC2086", "", `docker network rm -f $nid > /dev/null`, false},
		{"shellcheck:SC2086", "", `if [ -d "$x" ]; then rm -rf $name; fi`, true},
		{"shellcheck:SC2086", "", `sudo docker exec $container_2 /bin/ping -c 3 $container_1_ip`, false},
		{"shellcheck:SC2086", "", `if [ -z $1 ]; then`, false},
		{"shellcheck:SC2086", "", `echo "usage: $(basename $0) [options]"`, false},
		{"shellcheck:SC2086", "", `  sudo rm -f $NAME.tar.gz`, true},
		{"shellcheck:SC2086", "", `if [ -n $version ]; then`, true},
		{"shellcheck:SC2086", "", `if [ $name = "x" ]; then`, true},
		{"shellcheck:SC2086", "", `[ "$a" != $b ] && exit 1`, true},
		{"shellcheck:SC2086", "", `if [ $count -gt 0 ]; then`, false},
		{"shellcheck:SC2086", "", `if [[ -n $version ]]; then`, false},
	} {
		r, _ := lookup(tc.rule)
		if got := r.keep(site{message: tc.message, line: tc.line}); got != tc.want {
			t.Errorf("%s on %q: keep %v, want %v", tc.rule, tc.line, got, tc.want)
		}
	}
}

// The rules kept by where a report is look at its function (where a value
// comes from), its file (TypeScript or JavaScript) and its message.
func TestKeepDecidesByTheScope(t *testing.T) {
	t.Parallel()
	const voidReturn = "Promise returned in function argument where a void return was expected."
	for _, tc := range []struct {
		rule, path, message, line, scope, after, subject string
		want                                             bool
	}{
		{rule: "ruff:S301", line: "    return pickle.loads(request.data)", scope: "def load():", want: true},
		{rule: "ruff:S301", line: "    obj = pickle.loads(payload)", scope: "def handle(conn):\n    payload = conn.recv(4096)", want: true},
		{rule: "ruff:S301", line: "    state = pickle.loads(base64.b64decode(token))", scope: "def restore(token):", want: true},
		{rule: "ruff:S301", line: "    args = pickle.loads(blob)", scope: "def main():\n    blob = open(sys.argv[1], 'rb').read()", want: true},
		{rule: "ruff:S301", line: "        return pickle.load(fh)", scope: "def load_cache(path):\n    with open(path, 'rb') as fh:", want: false},
		{rule: "ruff:S301", line: "    return pickle.loads(data)", scope: "def decode(data):", want: false},
		{rule: "ruff:S324", line: "    return hashlib.md5(password.encode()).hexdigest()", scope: "def store(user, password):", want: true},
		{rule: "ruff:S324", line: "    return hashlib.md5(p.encode()).hexdigest()", scope: "def hash_passwd(p):", want: true},
		{rule: "ruff:S324", line: "    digest = hashlib.md5(data).hexdigest()", scope: "def checksum(data):", want: false},
		{rule: "ruff:S324", line: "    sign = hashlib.md5((payload + self._KEY).encode('utf-8')).hexdigest()", scope: "def _sign(self, payload):", want: false},
		{rule: "oxlint:react/no-danger", line: "  return <div dangerouslySetInnerHTML={{ __html: props.bio }} />;", want: true},
		{rule: "oxlint:react/no-danger", line: "      dangerouslySetInnerHTML={{", after: "        __html: comment.body,\n      }}", want: true},
		{rule: "oxlint:react/no-danger", line: "  <div dangerouslySetInnerHTML={{ __html: DOMPurify.sanitize(html) }} />", want: false},
		{rule: "oxlint:react/no-danger", line: "  <div dangerouslySetInnerHTML={{ __html: '<br/>' }} />", want: false},
		{rule: "oxlint:react/no-danger", line: "  <script dangerouslySetInnerHTML={{ __html: JSON.stringify(state) }} />", want: false},
		{rule: "oxlint:typescript/no-floating-promises", path: "src/save.ts", line: "  save(0);", want: true},
		{rule: "oxlint:typescript/no-floating-promises", path: "public/app/projectManager.js", line: "    this.loadData();", want: false},
		{rule: "oxlint:typescript/no-floating-promises", path: "scripts/build/flatten.ts", line: "main();", want: false},
		{rule: "oxlint:typescript/await-thenable", path: "public/app/blockNode.js", line: "  let response = await this.apiSendDataService(", want: false},
		{rule: "oxlint:typescript/no-misused-promises", path: "printer.js", message: voidReturn, line: "  this.buffer.forEach(async (chunk) => {", want: true},
		{rule: "oxlint:typescript/no-misused-promises", path: "src/list.ts", message: voidReturn, line: "  const kept = items.filter(async (i) => await allowed(i));", want: true},
		{rule: "oxlint:typescript/no-misused-promises", path: "src/menu.js", message: voidReturn, line: "  button.addEventListener('click', async (e) => {", want: false},
		{rule: "oxlint:typescript/no-misused-promises", path: "src/a.ts", message: "Expected non-Promise value in a boolean conditional.", line: "  if (user.loaded()) {", want: true},
		{rule: "oxlint:eslint/no-cond-assign", path: "lbfgs.js", line: "  if (step = 0) {", want: true},
		{rule: "oxlint:eslint/no-cond-assign", path: "Util.js", line: "  while (e = r.exec(q))", want: false},
		{rule: "oxlint:eslint/no-cond-assign", path: "forms.js", line: `      if (fail = "No such hook exists") {`, want: true},
		{rule: "oxlint:eslint/no-cond-assign", path: "jinja2.js", line: `        if (ch = stream.eat("#")) {`, want: false},
		{rule: "oxlint:eslint/no-cond-assign", path: "a.ts", line: `  if (a === b && (c = d)) {`, want: true},
		{rule: "shellcheck:SC2046", line: `if readlink -f $(command -v iptables) | grep -q "nft"; then`, subject: "$(command -v iptables)", want: false},
		{rule: "shellcheck:SC2046", line: `rm -f $(find . -name '*.tmp')`, subject: "$(find . -name '*.tmp')", want: true},
	} {
		r, _ := lookup(tc.rule)
		if got := r.keep(site{path: tc.path, message: tc.message, line: tc.line, scope: tc.scope, after: tc.after, subject: tc.subject}); got != tc.want {
			t.Errorf("%s in %q on %q after %q: keep %v, want %v", tc.rule, tc.path, tc.line, tc.scope, got, tc.want)
		}
	}
}

// Test code and a test's input data are told apart from the program.
func TestTestCodeAndTestData(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path       string
		code, data bool
	}{
		{"src/app.py", false, false},
		{"tests/test_app.py", true, false},
		{"tests/conftest.py", true, false},
		{"tests/fixtures/app.py", true, false},
		{"tests/data/cases/return_annotation.py", true, true},
		{"crates/ruff_linter/resources/test/fixtures/pyflakes/F821_0.py", true, true},
		{"src/__tests__/button.test.tsx", true, false},
		{"lib/button.spec.ts", true, false},
		{"tests/format/js/arrows/call.js", true, true},
		{"pkg/testdata/x.py", false, true},
		{"docs/data/x.py", false, false},
	} {
		if got := testCode(tc.path); got != tc.code {
			t.Errorf("testCode(%s) = %v", tc.path, got)
		}
		if got := testData(tc.path); got != tc.data {
			t.Errorf("testData(%s) = %v", tc.path, got)
		}
	}
}

// A Dockerfile instruction's continued lines are part of what decides.
func TestInstructionTakesContinuedLines(t *testing.T) {
	t.Parallel()
	b := []byte("FROM x\nRUN set -eux; \\\n  curl -o a https://x | sh\nUSER app\n")
	if got := instruction(indexLines(b), diag{rule: "hadolint:DL4006", line: 2, endLine: 2}); got != "RUN set -eux; \\\n  curl -o a https://x | sh" {
		t.Errorf("instruction %q", got)
	}
	if got := instruction(indexLines(b), diag{rule: "shellcheck:SC2086", line: 2, endLine: 2}); got != "RUN set -eux; \\" {
		t.Errorf("a shell report takes only its line: %q", got)
	}
}
