package security

import (
	"testing"

	"github.com/quorum-review/quorum/internal/specialist"
)

// A G701 at the sink of a query another SQL finding flagged where it was
// built, a few lines up, is the same problem; one far away, or in another
// file, is not.
func TestTaintAfterBuild(t *testing.T) {
	t.Parallel()
	fs := taintAfterBuild([]specialist.Finding{
		{Rule: "quorum:sql-injection", Path: "db.go", Line: 10},
		{Rule: "gosec:G701", Path: "db.go", Line: 12},
		{Rule: "gosec:G701", Path: "db.go", Line: 40},
		{Rule: "gosec:G701", Path: "other.go", Line: 12},
		{Rule: "gosec:G201", Path: "x.go", Line: 5},
		{Rule: "gosec:G701", Path: "x.go", Line: 5},
	})
	var got []string
	for _, f := range fs {
		got = append(got, f.Path+":"+f.Rule)
	}
	want := []string{"db.go:quorum:sql-injection", "db.go:gosec:G701", "other.go:gosec:G701", "x.go:gosec:G201"}
	if len(got) != len(want) {
		t.Fatalf("kept %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("kept %v, want %v", got, want)
		}
	}
	if fs[1].Line != 40 {
		t.Errorf("kept the G701 on line %d, want the one on line 40", fs[1].Line)
	}
}
