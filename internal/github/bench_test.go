package github

import (
	"context"
	"testing"

	"github.com/quorum-review/quorum/internal/change"
)

// BenchmarkChange compares building a pull request's change from GitHub
// (the double: API requests checked against GitHub's description, and a
// shallow fetch over smart HTTP), with the fetch directory warm or cold,
// against reading the same commits from a local repository.
func BenchmarkChange(b *testing.B) {
	f := setup(b, 20)
	ctx := context.Background()
	ref := change.Ref{Owner: "octo", Repo: "demo", PRNumber: 7, Base: f.base, Head: f.head}
	b.Run("local", func(b *testing.B) {
		for b.Loop() {
			if _, err := change.NewLocal(f.repo.Dir).Change(ctx, ref); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("github-warm", func(b *testing.B) {
		src := f.app.Source("99")
		for b.Loop() {
			if _, err := src.Change(ctx, ref); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("github-cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			f.app.cfg.CacheDir = b.TempDir()
			b.StartTimer()
			if _, err := f.app.Source("99").Change(ctx, ref); err != nil {
				b.Fatal(err)
			}
		}
	})
}
