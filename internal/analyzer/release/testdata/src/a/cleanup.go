package a

import (
	"errors"
	"net"
)

type conn struct{ nc net.Conn }

func (c *conn) cleanup()          {}
func (c *conn) Close() error      { return nil }
func (c *conn) handshake() error  { return nil }
func (c *conn) auth() error       { return nil }
func (c *conn) params() error     { return nil }
func (c *conn) startWatcher()     {}
func (c *conn) watch(n int) error { return nil }

// The go-sql-driver/mysql shape: one error return forgot mc.cleanup().
func connect(n int) (*conn, error) {
	mc := &conn{}
	if n < 0 {
		return nil, errors.New("bad n") // want `this error return skips mc.cleanup\(\)`
	}
	mc.startWatcher()
	if err := mc.watch(n); err != nil {
		return nil, err // want `this error return skips mc.cleanup\(\)`
	}
	if err := mc.handshake(); err != nil {
		mc.cleanup()
		return nil, err
	}
	if err := mc.auth(); err != nil {
		mc.cleanup()
		return nil, err
	}
	if err := mc.params(); err != nil {
		mc.Close()
		return nil, err
	}
	return mc, nil
}

// One cleanup return is no pattern.
func connectOnce(n int) (*conn, error) {
	mc := &conn{}
	if n < 0 {
		return nil, errors.New("bad n")
	}
	if err := mc.handshake(); err != nil {
		mc.cleanup()
		return nil, err
	}
	return mc, nil
}
