package llm

import (
	"errors"
	"sync"
)

// DefaultMaxTokensPerReview is the token budget of one review when the
// configuration does not give one: a few requests' worth at a 32,000-token
// context, enough for a large pull request's every specialist, small
// enough that a runaway review costs cents, not dollars.
const DefaultMaxTokensPerReview = 200000

// errOverBudget: a request was not sent, since it could have taken the
// review past its token budget.
var errOverBudget = errors.New("the review's token budget is spent")

// Budget bounds the tokens, prompt and answer, that one review's requests
// to the model may take, shared by the engines of all its specialists,
// which run at once. Before a request is sent, what it could take at most
// (its prompt and the longest answer asked for) is held; when it is
// answered, what it took (the server's count, else the estimate) replaces
// what was held. A request that does not fit is not sent. A nil *Budget
// bounds nothing.
type Budget struct {
	limit int

	mu sync.Mutex
	// used is what answered requests took, held what sent requests may
	// still take.
	used, held int
}

// NewBudget returns a budget of limit tokens; nil, no bound, when limit
// is 0 or less.
func NewBudget(limit int) *Budget {
	if limit <= 0 {
		return nil
	}
	return &Budget{limit: limit}
}

// Limit is the budget's size in tokens.
func (b *Budget) Limit() int {
	if b == nil {
		return 0
	}
	return b.limit
}

// hold sets n tokens aside for a request, and reports whether they fit.
func (b *Budget) hold(n int) bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+b.held+n > b.limit {
		return false
	}
	b.held += n
	return true
}

// settle replaces the held tokens of an answered (or failed) request with
// what it took.
func (b *Budget) settle(held, took int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held -= held
	b.used += took
}

// Used is what the review's answered requests took.
func (b *Budget) Used() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
