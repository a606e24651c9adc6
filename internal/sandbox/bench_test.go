package sandbox_test

import (
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/sandbox"
)

// BenchmarkStart is the start cost of a confined run against a plain one
// of the same program, in the same run (docs/performance.md):
//
//	go test ./internal/sandbox -run '^$' -bench Start -count 5
func BenchmarkStart(b *testing.B) {
	const exe = "/bin/true"
	dir := b.TempDir()
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command(exe).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sandboxed", func(b *testing.B) {
		spec := sandbox.Spec{Exe: exe, Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir, Writable: []string{dir}, Own: []string{dir}}
		for b.Loop() {
			var stderr strings.Builder
			if err := sandbox.Run(context.Background(), spec, io.Discard, &stderr); err != nil {
				b.Fatal(err, stderr.String())
			}
		}
	})
}
