package a

import (
	"errors"
	"sync"
)

type stream struct {
	mu    sync.RWMutex
	state int
}

type js struct {
	mu      sync.RWMutex
	streams map[string]*stream
}

// The nats-server shape: an early error return forgot its RUnlock.
func (j *js) healthy(name string) error {
	j.mu.RLock()
	s := j.streams[name]
	if s == nil {
		return errors.New("stream missing") // want `this return leaves j.mu locked`
	}
	if s.state == 0 {
		j.mu.RUnlock()
		return errors.New("not ready")
	}
	j.mu.RUnlock()
	return nil
}

// Every path releases.
func (j *js) healthyOK(name string) error {
	j.mu.RLock()
	s := j.streams[name]
	if s == nil {
		j.mu.RUnlock()
		return errors.New("stream missing")
	}
	j.mu.RUnlock()
	return nil
}

// Deferred: nothing to say.
func (j *js) deferred(name string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.streams[name] == nil {
		return errors.New("missing")
	}
	return nil
}

// Returns holding the lock on success, for the caller: on purpose.
func (j *js) get(name string) (*stream, error) {
	j.mu.Lock()
	s := j.streams[name]
	if s == nil {
		j.mu.Unlock()
		return nil, errors.New("missing")
	}
	return s, nil
}

// A helper releases.
func (j *js) unlockAll() { j.mu.Unlock() }

func (j *js) viaHelper(name string) error {
	j.mu.Lock()
	if j.streams[name] == nil {
		j.unlockAll()
		return errors.New("missing")
	}
	j.mu.Unlock()
	return nil
}

// A function with no results returning early with the lock held.
func (s *stream) bump(n int) {
	s.mu.Lock()
	if n < 0 {
		return // want `this return leaves s.mu locked`
	}
	s.state += n
	s.mu.Unlock()
}

// Locked only in a branch: not held on every path.
func (s *stream) maybe(lock bool) error {
	if lock {
		s.mu.Lock()
	}
	if s.state < 0 {
		return errors.New("negative")
	}
	if lock {
		s.mu.Unlock()
	}
	return nil
}

// A panic path is no return.
func (s *stream) must(n int) {
	s.mu.Lock()
	if n < 0 {
		panic("negative")
	}
	s.state = n
	s.mu.Unlock()
}

// Called with s.mu held: releases and takes it again around a call.
func (s *stream) callerHeld(f func() error) error {
	s.mu.Unlock()
	err := f()
	s.mu.Lock()
	if err != nil {
		return err
	}
	return nil
}

// A closure releases on the error path.
func (j *js) closure(name string) error {
	j.mu.Lock()
	fail := func(err error) error {
		j.mu.Unlock()
		return err
	}
	if j.streams[name] == nil {
		return fail(errors.New("missing"))
	}
	j.mu.Unlock()
	return nil
}

func (s *stream) bumpSafe() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state++
}

// A call of a function that takes and releases its own lock releases
// nothing of ours.
func (j *js) other(s *stream, name string) error {
	j.mu.RLock()
	s.bumpSafe()
	if j.streams[name] == nil {
		return errors.New("missing") // want `this return leaves j.mu locked`
	}
	j.mu.RUnlock()
	return nil
}
