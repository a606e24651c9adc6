package github

import (
	"context"
	"errors"
	"strconv"

	"github.com/quorum-review/quorum/internal/change"
)

// Source builds the change of a pull request from GitHub: its metadata
// and files from the API, its trees from a shallow fetch.
type Source struct {
	app      *App
	location string
}

var _ change.Source = (*Source)(nil)

// Change fetches the change of ref's pull request.
func (s *Source) Change(ctx context.Context, ref change.Ref) (*change.Change, error) {
	if _, err := strconv.ParseInt(s.location, 10, 64); err != nil {
		return nil, errors.New("github source: the location is not an installation id")
	}
	return nil, errors.New("github source: not implemented yet")
}
