// Package context stands for golang.org/x/net/context.
package context

import (
	std "context"
	"time"
)

type (
	Context    = std.Context
	CancelFunc = std.CancelFunc
)

func Background() Context { return std.Background() }

func WithCancel(parent Context) (Context, CancelFunc) { return std.WithCancel(parent) }

func WithTimeout(parent Context, d time.Duration) (Context, CancelFunc) {
	return std.WithTimeout(parent, d)
}
