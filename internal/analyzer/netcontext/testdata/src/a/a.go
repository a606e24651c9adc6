package a

import (
	std "context"
	"time"

	"golang.org/x/net/context"
)

func f() {
	ctx, _ := context.WithTimeout(context.Background(), time.Second) // want `the cancel function returned by context.WithTimeout should be called, not discarded`
	_ = ctx
	var c2, _ = context.WithCancel(ctx) // want `the cancel function returned by context.WithCancel should be called`
	_ = c2
	c3, cancel := context.WithCancel(ctx)
	defer cancel()
	_ = c3
	c4, _ := std.WithCancel(std.Background()) // vet's lostcancel reports this one
	_ = c4
}
