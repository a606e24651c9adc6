package polyglot

import (
	"slices"
	"testing"

	"github.com/quorum-review/quorum/internal/specialist"
)

// Every rule of the table is known, of a specialist that takes it, with a
// category and severity the API knows; the rules measured as noise are off.
func TestRuleTableIsWellFormed(t *testing.T) {
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
	for _, id := range []string{"ruff:S311", "ruff:PERF401", "oxlint:eslint/no-unused-vars", "shellcheck:SC2034", "hadolint:DL3059", "hadolint:SC2086", "hadolint:DL3008", "ruff:S301"} {
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
	} {
		r, _ := lookup(tc.rule)
		if got := r.keep(tc.message, tc.line); got != tc.want {
			t.Errorf("%s on %q: keep %v, want %v", tc.rule, tc.line, got, tc.want)
		}
	}
}

// A Dockerfile instruction's continued lines are part of what decides.
func TestInstructionTakesContinuedLines(t *testing.T) {
	b := []byte("FROM x\nRUN set -eux; \\\n  curl -o a https://x | sh\nUSER app\n")
	if got := instruction(indexLines(b), diag{rule: "hadolint:DL4006", line: 2, endLine: 2}); got != "RUN set -eux; \\\n  curl -o a https://x | sh" {
		t.Errorf("instruction %q", got)
	}
	if got := instruction(indexLines(b), diag{rule: "shellcheck:SC2086", line: 2, endLine: 2}); got != "RUN set -eux; \\" {
		t.Errorf("a shell report takes only its line: %q", got)
	}
}
