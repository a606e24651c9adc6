package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDataDirSharedAcrossDirectories: with no --data-dir, review --save
// run from inside the repository it reviews, and token create and serve
// run from elsewhere, share one database, the user's
// ($XDG_DATA_HOME/quorum, else ~/.local/share/quorum), and the repository
// gets no database of its own.
// (Not parallel: it changes the working directory.)
func TestDataDirSharedAcrossDirectories(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  func(home string) func(string) string
		dir  func(home string) string
	}{
		{"home", func(home string) func(string) string { return env("HOME", home) },
			func(home string) string { return filepath.Join(home, ".local", "share", "quorum") }},
		{"xdg", func(home string) func(string) string {
			return env("HOME", home, "XDG_DATA_HOME", filepath.Join(home, "data"))
		}, func(home string) string { return filepath.Join(home, "data", "quorum") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			getenv, want := tc.env(home), filepath.Join(tc.dir(home), "quorum.db")
			repoDir := leakRepo(t)

			t.Chdir(repoDir)
			var out, errb bytes.Buffer
			err := run(context.Background(), []string{"review", "--save", "--format", "json", "--owner", "acme", "--name", "api"}, getenv, &out, &errb)
			if code := exitCode(err, &errb); code != 1 {
				t.Fatalf("review --save: exit %d, want 1; stderr:\n%s", code, errb.String())
			}
			var printed struct{ ID string }
			if err := json.Unmarshal(out.Bytes(), &printed); err != nil || printed.ID == "" {
				t.Fatalf("review id: %v in\n%s", err, out.String())
			}
			for _, say := range []string{"saved review " + printed.ID, want, "GET /v1/reviews/" + printed.ID} {
				if !strings.Contains(errb.String(), say) {
					t.Errorf("review --save does not say %q:\n%s", say, errb.String())
				}
			}
			if _, err := os.Stat(filepath.Join(repoDir, "quorum-data")); err == nil {
				t.Errorf("review --save made a database inside the repository it reviewed")
			}

			t.Chdir(t.TempDir())
			tok, tokErr, err := quorum(t, getenv, "token", "create", "--account", "acme", "--scope", "reviews:read")
			if err != nil {
				t.Fatalf("token create: %v\n%s", err, tokErr)
			}
			base := serve(t, getenv)
			status, served := get(t, base+"/v1/reviews/"+printed.ID, strings.TrimSpace(strings.Split(tok, "\n")[0]))
			if status != 200 {
				t.Fatalf("GET the saved review from serve run elsewhere: %d %v", status, served)
			}
		})
	}
}

// TestDataDirStateDirectory: under systemd with StateDirectory=, the
// database is in $STATE_DIRECTORY (the first, when several are given),
// before the user's data directory; QUORUM_DATA_DIR and --data-dir still
// win over it. (Not parallel: it changes the working directory, so that
// a relative default would show.)
func TestDataDirStateDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	state, other, home := t.TempDir(), t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		getenv func(string) string
		args   []string
		want   string
	}{
		{env("STATE_DIRECTORY", state+":"+other, "HOME", home), nil, state},
		{env("STATE_DIRECTORY", state, "HOME", home, "QUORUM_DATA_DIR", other), nil, other},
		{env("STATE_DIRECTORY", state, "HOME", home), []string{"--data-dir", other}, other},
	} {
		out, _, err := quorum(t, tc.getenv, append([]string{"migrate"}, tc.args...)...)
		if err != nil {
			t.Fatalf("migrate %v: %v", tc.args, err)
		}
		if want := "(" + filepath.Join(tc.want, "quorum.db") + ")"; !strings.Contains(out, want) {
			t.Errorf("migrate %v said:\n%s\nwant the database %s", tc.args, out, want)
		}
	}
	if entries, _ := os.ReadDir(home); len(entries) > 0 {
		t.Errorf("the user's data directory was used under systemd: %s has %v", home, entries)
	}
}

// TestDataDirSystemdUnit runs serve with the environment
// deploy/systemd/quorum.service gives it, as systemd would (%S and %C
// expanded, $STATE_DIRECTORY set for StateDirectory=): its database is in
// the unit's state directory.
func TestDataDirSystemdUnit(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../../deploy/systemd/quorum.service")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	root := t.TempDir()
	stateRoot, cacheRoot := filepath.Join(root, "lib"), filepath.Join(root, "cache")
	expand := strings.NewReplacer("%S", stateRoot, "%C", cacheRoot).Replace
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if kv, ok := strings.CutPrefix(line, "Environment="); ok {
			k, v, _ := strings.Cut(kv, "=")
			vars[k] = expand(v)
		}
		if name, ok := strings.CutPrefix(line, "StateDirectory="); ok {
			vars["STATE_DIRECTORY"] = filepath.Join(stateRoot, name)
			if err := os.MkdirAll(vars["STATE_DIRECTORY"], 0o700); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if vars["STATE_DIRECTORY"] == "" {
		t.Fatal("the unit has no StateDirectory=")
	}
	// The test's own listening address (serve's helper) and analyzers,
	// not the unit's.
	serve(t, func(k string) string { return vars[k] }, "--analyzers-dir", t.TempDir())
	if _, err := os.Stat(filepath.Join(vars["STATE_DIRECTORY"], "quorum.db")); err != nil {
		t.Errorf("no database in the unit's state directory: %v", err)
	}
}

// TestDefaultDataDir: the default's order, and what it ignores as the XDG
// specification asks (a relative $XDG_DATA_HOME) or cannot use.
func TestDefaultDataDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		getenv func(string) string
		want   string
	}{
		{env("STATE_DIRECTORY", "/var/lib/quorum:/var/lib/other", "XDG_DATA_HOME", "/x", "HOME", "/h"), "/var/lib/quorum"},
		{env("STATE_DIRECTORY", "quorum", "XDG_DATA_HOME", "/x", "HOME", "/h"), "/x/quorum"},
		{env("XDG_DATA_HOME", "data", "HOME", "/h"), "/h/.local/share/quorum"},
		{env("HOME", "/h"), "/h/.local/share/quorum"},
		{env("HOME", "h"), ""},
		{env(), ""},
	} {
		got, err := defaultDataDir(tc.getenv)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("defaultDataDir = %q, %v; want %q", got, err, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), "--data-dir") {
			t.Errorf("the error does not say how to give one: %v", err)
		}
	}
}
