package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
)

// A case reviewed with a module cache of its own fetches what it needs
// through the proxy and is analysed; offline, the user's module cache
// lacks the module, and the review says its Go was not analysed.
func TestReviewCaseFetchesIntoItsModCache(t *testing.T) {
	proxy := goanalysistest.NewGoProxy(t, goanalysistest.Module{Path: "corp.example/letters", Version: "v1.0.0", Files: map[string]string{
		"letters.go": "package letters\n\n// All are the letters.\nconst All = \"abcdefghijklmnopqrstuvwxyz\"\n",
	}})
	// The token's letters come from the module.
	token := func(rand string) string {
		return "package tokens\n\nimport (\n\t\"" + rand + "\"\n\n\t\"corp.example/letters\"\n)\n\n" +
			"// New returns a session token of n letters.\nfunc New(n int) string {\n\tb := make([]byte, n)\n" +
			"\tfor i := range b {\n\t\tb[i] = letters.All[rand.Intn(len(letters.All))]\n\t}\n\treturn string(b)\n}\n"
	}
	r := goanalysistest.NewRepo(t)
	r.Write(map[string]string{
		"go.mod":   "module example.com/tokens\n\ngo 1.22\n\nrequire corp.example/letters v1.0.0\n",
		"token.go": strings.Replace(token("math/rand"), "return string(b)", "return string(b[:n])", 1),
	})
	base := r.Commit("base")
	r.Write(map[string]string{"token.go": token("math/rand")})
	head := r.Commit("head")

	review := func(args ...string) Outcome {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args = append([]string{"review-case", "--repo", r.Dir, "--base", base, "--head", head}, args...)
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		var o Outcome
		if err := json.Unmarshal(stdout.Bytes(), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	fresh := review("--modcache", t.TempDir(), "--go-proxy", proxy.URL, "--go-private", "corp.example")
	if strings.Contains(fresh.Summary, "Not analysed") || !strings.Contains(fresh.Summary, "Go (Go analyzers)") {
		t.Errorf("with a module cache of its own, the case was not analysed:\n%s", fresh.Summary)
	}
	offline := review()
	if !strings.Contains(offline.Summary, "module corp.example/letters@v1.0.0 could not be had") {
		t.Errorf("offline, the summary does not name the module the user's cache lacks:\n%s", offline.Summary)
	}
}
