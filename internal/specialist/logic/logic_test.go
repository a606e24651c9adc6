package logic_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/logic"
)

func TestReviewPlanted(t *testing.T) {
	t.Parallel()
	p := goanalysistest.NewPlanted(t)
	l := logic.New(goanalysistest.Loader())
	if l.Name() != specialist.Logic {
		t.Fatalf("Name() = %q", l.Name())
	}
	fs, err := l.Review(context.Background(), p.Change)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		t.Logf("%s:%d %s %s %s %q", f.Path, f.Line, f.Rule, f.Severity, f.Headline, f.Note)
	}
	p.Check(t, fs, specialist.CategoryLogic, map[string]string{
		"go-vet:lostcancel":    specialist.SeverityHigh,
		"go-vet:printf":        specialist.SeverityMedium,
		"go-vet:stringintconv": specialist.SeverityMedium,
	})

	t.Run("suggested patch applies", func(t *testing.T) {
		t.Parallel()
		var patch string
		for _, f := range fs {
			if f.Rule == "go-vet:stringintconv" {
				patch = f.SuggestedPatch
			}
		}
		if !strings.Contains(patch, "-\treturn string(i) // want:go-vet:stringintconv\n+\treturn ") {
			t.Fatalf("stringintconv patch:\n%s", patch)
		}
		if out, err := p.Repo.GitInput(patch, "apply", "--check", "-"); err != nil {
			t.Fatalf("git apply --check: %v\n%s\n%s", err, out, patch)
		}
	})
	t.Run("deterministic", func(t *testing.T) {
		t.Parallel()
		again, err := l.Review(context.Background(), p.Change)
		if err != nil {
			t.Fatal(err)
		}
		if len(again) != len(fs) {
			t.Fatalf("second review found %d findings, first %d", len(again), len(fs))
		}
		for i := range fs {
			if again[i] != fs[i] {
				t.Errorf("finding %d differs: %+v vs %+v", i, again[i], fs[i])
			}
		}
	})
}
