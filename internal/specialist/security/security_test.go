package security_test

import (
	"context"
	"errors"
	"testing"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/security"
)

// fakeSecrets reports one secret finding, on old.go's first added line.
type fakeSecrets struct{ err error }

func (f fakeSecrets) Scan(_ context.Context, c *change.Change) ([]specialist.Finding, error) {
	if f.err != nil {
		return nil, f.err
	}
	return []specialist.Finding{{
		Rule: "gitleaks:test", Category: specialist.CategorySecurity, Severity: specialist.SeverityCritical,
		Path: "app/exec.go", Line: 1, EndLine: 1, Headline: "a secret", Engine: specialist.EngineBuiltin,
	}}, nil
}

func TestReviewPlanted(t *testing.T) {
	t.Parallel()
	p := goanalysistest.NewPlanted(t)
	s := security.New(p.Repo.Loader(), fakeSecrets{})
	if s.Name() != specialist.Security {
		t.Fatalf("Name() = %q", s.Name())
	}
	fs, err := s.Review(context.Background(), p.Change)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		t.Logf("%s:%d %s %s %s", f.Path, f.Line, f.Rule, f.Severity, f.Headline)
	}
	p.Check(t, fs, specialist.CategorySecurity, map[string]string{
		"gosec:G201": specialist.SeverityHigh,
		"gosec:G204": specialist.SeverityHigh,
		"gosec:G402": specialist.SeverityHigh,
	})
	secret := 0
	for _, f := range fs {
		if f.Rule == "gitleaks:test" {
			secret++
		}
	}
	if secret != 1 {
		t.Errorf("the secret scanner's finding is there %d times, want once", secret)
	}

	t.Run("scanner error fails the review", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("boom")
		_, err := security.New(p.Repo.Loader(), fakeSecrets{err: boom}).Review(context.Background(), p.Change)
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want %v", err, boom)
		}
	})
}
