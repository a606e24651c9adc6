package main

import (
	"context"
	"time"

	"github.com/quorum-review/quorum/internal/gitea"
	giteaintake "github.com/quorum-review/quorum/internal/gitea/intake"
	"github.com/quorum-review/quorum/internal/github"
	"github.com/quorum-review/quorum/internal/github/intake"
	"github.com/quorum-review/quorum/internal/lang"
	"github.com/quorum-review/quorum/internal/metrics"
	"github.com/quorum-review/quorum/internal/pipeline"
	"github.com/quorum-review/quorum/internal/store"
	"github.com/quorum-review/quorum/internal/webhook/fanout"
)

// jobKinds are the kinds of job serve registers, which the metrics count
// by name.
var jobKinds = []string{
	pipeline.ReviewArgs{}.Kind(), fanout.DeliverArgs{}.Kind(), store.OptimizeArgs{}.Kind(),
	github.PostArgs{}.Kind(), intake.PruneArgs{}.Kind(), intake.DeliveryArgs{}.Kind(),
	gitea.PostArgs{}.Kind(), giteaintake.PruneArgs{}.Kind(), giteaintake.DeliveryArgs{}.Kind(),
}

// jobCounts counts the job queue's jobs by kind and state, for the
// metrics.
func jobCounts(ctx context.Context, d *store.DB) ([]metrics.JobCount, error) {
	rows, err := d.Reader().Query(ctx, `SELECT kind, state, count(*) FROM river_job GROUP BY kind, state`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []metrics.JobCount
	for rows.Next() {
		var jc metrics.JobCount
		var n int64
		if err := rows.Scan(&jc.Kind, &jc.State, &n); err != nil {
			return nil, err
		}
		jc.N = float64(n)
		out = append(out, jc)
	}
	return out, rows.Err()
}

// observeReview records a saved review in the metrics: its outcome, its
// specialists, its findings and the languages of its changed files,
// analysed or not (a file any specialist's engine analysed counts as
// analysed).
func observeReview(m *metrics.Metrics, res pipeline.Result, took time.Duration) {
	var specs []metrics.Specialist
	analysed := map[string]bool{}
	for _, o := range res.Outcomes {
		specs = append(specs, metrics.Specialist{Name: o.Specialist, Took: o.Duration, Failed: o.Err != nil})
		for _, cv := range o.Coverage {
			analysed[cv.Path] = analysed[cv.Path] || cv.Analysed
		}
	}
	var findings [][2]string
	for _, f := range res.Review.Findings {
		findings = append(findings, [2]string{f.Specialist, f.Severity})
	}
	var files []metrics.File
	for p, a := range analysed {
		l := lang.Of(p)
		if l == "" {
			l = "other"
		}
		files = append(files, metrics.File{Language: l, Analysed: a})
	}
	m.Review(res.Completed(), res.Reason, took, specs, findings, files)
}
