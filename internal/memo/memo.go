// Package memo computes a value once per key however many goroutines ask
// for it at once, and keeps the last few: the specialists of one review
// share one load of the change's Go packages, one run of each language's
// analyzers.
package memo

import (
	"context"
	"slices"
	"sync"
)

// Memo keeps the values of the last Keep keys. The zero value keeps one.
// It is safe for concurrent use.
type Memo[V any] struct {
	// Keep is how many keys' values are kept (1 when 0).
	Keep int

	mu    sync.Mutex
	calls map[string]*call[V]
	order []string
}

type call[V any] struct {
	done chan struct{}
	v    V
	err  error
}

// Do returns the value of key, computing it with fn once however many
// callers ask at once. A caller whose ctx ends while another computes
// returns ctx's error. A failure (a cancelled context, say) is not kept:
// the next caller computes again.
func (m *Memo[V]) Do(ctx context.Context, key string, fn func() (V, error)) (V, error) {
	m.mu.Lock()
	if m.calls == nil {
		m.calls = map[string]*call[V]{}
	}
	c, ok := m.calls[key]
	if !ok {
		c = &call[V]{done: make(chan struct{})}
		m.calls[key] = c
		m.order = append(m.order, key)
		if len(m.order) > max(m.Keep, 1) {
			delete(m.calls, m.order[0])
			m.order = m.order[1:]
		}
		m.mu.Unlock()
		c.v, c.err = fn()
		close(c.done)
		if c.err != nil {
			m.forget(key, c)
		}
		return c.v, c.err
	}
	m.mu.Unlock()
	select {
	case <-c.done:
		if c.err != nil {
			return m.Do(ctx, key, fn)
		}
		return c.v, nil
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

// Keys returns the keys whose values are kept or being computed, oldest
// first.
func (m *Memo[V]) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.order)
}

func (m *Memo[V]) forget(key string, c *call[V]) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.calls[key] == c {
		delete(m.calls, key)
		m.order = slices.DeleteFunc(m.order, func(k string) bool { return k == key })
	}
}
