package security_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/quorum-review/quorum/internal/change"
	"github.com/quorum-review/quorum/internal/goanalysis/goanalysistest"
	"github.com/quorum-review/quorum/internal/specialist"
	"github.com/quorum-review/quorum/internal/specialist/logic"
	"github.com/quorum-review/quorum/internal/specialist/performance"
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
	// The specialists share one loader and run at once, as the pipeline
	// runs them: one load, one analysis pass, no race.
	loader := goanalysistest.Loader()
	s := security.New(loader, fakeSecrets{})
	if s.Name() != specialist.Security {
		t.Fatalf("Name() = %q", s.Name())
	}
	others := []specialist.Specialist{logic.New(loader), performance.New(loader)}
	otherFindings := make([][]specialist.Finding, len(others))
	var wg sync.WaitGroup
	for i, o := range others {
		wg.Go(func() {
			fs, err := o.Review(context.Background(), p.Change)
			if err != nil {
				t.Errorf("%s: %v", o.Name(), err)
			}
			otherFindings[i] = fs
		})
	}
	fs, err := s.Review(context.Background(), p.Change)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	p.Check(t, otherFindings[0], specialist.CategoryLogic, map[string]string{"go-vet:lostcancel": specialist.SeverityHigh})
	p.Check(t, otherFindings[1], specialist.CategoryPerformance, map[string]string{"quorum:deferinloop": specialist.SeverityMedium})
	for _, f := range fs {
		t.Logf("%s:%d %s %s %s", f.Path, f.Line, f.Rule, f.Severity, f.Headline)
	}
	p.Check(t, fs, specialist.CategorySecurity, map[string]string{
		"gosec:G702": specialist.SeverityHigh,
		"gosec:G402": specialist.SeverityHigh,
	})
	// gosec's G201 fires on the planted query, and so does the sqlinject
	// analyzer, whose finding stands for both.
	for _, line := range goanalysistest.Marked(p.Head["app/sql.go"], "want:quorum:sql-injection") {
		var rules []string
		for _, f := range fs {
			if f.Path == "app/sql.go" && f.Line == line {
				rules = append(rules, f.Rule)
			}
		}
		if fmt.Sprint(rules) != "[quorum:sql-injection]" {
			t.Errorf("app/sql.go:%d has %v, want the sqlinject finding alone", line, rules)
		}
	}
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
		_, err := security.New(goanalysistest.Loader(), fakeSecrets{err: boom}).Review(context.Background(), p.Change)
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want %v", err, boom)
		}
	})
}

// The default specialist scans with the real secrets scanner; the token is
// made up at run time, so this file holds nothing a scanner would report.
func TestReviewDefaultFindsSecrets(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 36)
	for i := range b {
		b[i] = alnum[r.IntN(len(alnum))]
	}
	token := "ghp_" + string(b)

	repo := goanalysistest.NewRepo(t)
	repo.Write(map[string]string{".env": "PORT=8080\n"})
	base := repo.Commit("base")
	repo.Write(map[string]string{".env": "PORT=8080\nGITHUB_TOKEN=" + token + "\n"})
	head := repo.Commit("head")

	s, err := security.NewDefault(goanalysistest.Loader())
	if err != nil {
		t.Fatal(err)
	}
	fs, err := s.Review(context.Background(), repo.Change(base, head))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].Path != ".env" || fs[0].Line != 2 || fs[0].Category != specialist.CategorySecurity || !strings.HasPrefix(fs[0].Rule, "gitleaks:") {
		t.Fatalf("findings %+v, want one gitleaks finding on .env:2", fs)
	}
	if strings.Contains(fmt.Sprintf("%+v", fs[0]), token) {
		t.Error("the finding carries the secret")
	}
}
