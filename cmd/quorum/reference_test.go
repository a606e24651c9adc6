package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"
)

var updateReference = flag.Bool("update-reference", false, "rewrite the configuration reference in docs/operations.md from the commands' flags")

// referenced are the commands whose flags docs/operations.md lists.
var referenced = [][]string{{"serve"}, {"migrate"}, {"backup"}, {"analyzers", "install"}, {"gitea", "connect"}, {"gitea", "disconnect"}}

// The configuration reference in docs/operations.md is the commands' own
// flag definitions: a flag added, renamed or given another default
// without the reference is a failure, fixed by
//
//	go test ./cmd/quorum -run TestConfigurationReference -update-reference
//
// (not parallel: it sets the package's capture hook while it runs).
func TestConfigurationReference(t *testing.T) {
	const path = "../../docs/operations.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	text := string(doc)
	for _, args := range referenced {
		var c *command
		captured = func(got *command) { c = got }
		err := run(context.Background(), args, env(), &bytes.Buffer{}, &bytes.Buffer{})
		captured = nil
		if !errors.Is(err, errCaptured) || c == nil {
			t.Fatalf("%v: %v, want the command captured", args, err)
		}
		var b bytes.Buffer
		c.reference(&b, home)
		name := strings.Join(args, " ")
		re := regexp.MustCompile(`(?s)(<!-- reference: ` + regexp.QuoteMeta(name) + ` -->\n).*?(<!-- /reference -->)`)
		if !re.MatchString(text) {
			t.Fatalf("docs/operations.md has no <!-- reference: %s --> … <!-- /reference --> section", name)
		}
		want := re.ReplaceAllString(text, "${1}"+strings.ReplaceAll(b.String(), "$", "$$")+"${2}")
		if want != text && !*updateReference {
			t.Errorf("the reference of quorum %s in docs/operations.md is not the command's flags; run\n\tgo test ./cmd/quorum -run TestConfigurationReference -update-reference\nwant:\n%s", name, b.String())
		}
		text = want
	}
	if *updateReference && text != string(doc) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
