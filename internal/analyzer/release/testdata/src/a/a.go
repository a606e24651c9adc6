package a

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
)

type store struct {
	mu   sync.Mutex
	rw   sync.RWMutex
	data map[string]int
}

func (s *store) get(k string) int {
	s.mu.Lock() // want `s.mu.Lock\(\) is never released`
	return s.data[k]
}

func (s *store) getOK(k string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data[k]
}

func (s *store) read(k string) int {
	s.rw.RLock() // want `s.rw.RLock\(\) is never released: no s.rw.RUnlock\(\)`
	defer s.rw.Unlock()
	return s.data[k]
}

func (s *store) explicit(k string) int {
	s.mu.Lock()
	v := s.data[k]
	s.mu.Unlock()
	return v
}

func (s *store) closure(k string) int {
	s.mu.Lock()
	defer func() { s.mu.Unlock() }()
	return s.data[k]
}

func (s *store) handOff() func() {
	s.mu.Lock()
	return s.mu.Unlock
}

func (s *store) lockAll() {
	s.mu.Lock()
}

func readFile(p string) ([]byte, error) {
	f, err := os.Open(p) // want `f is never closed`
	if err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

func readFileOK(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func open(p string) (*os.File, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func query(db *sql.DB) (int, error) {
	rows, err := db.Query("SELECT 1") // want `rows is never closed`
	if err != nil {
		return 0, err
	}
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}

func fetch(c *http.Client, u string) (map[string]any, error) {
	resp, err := c.Get(u) // want `resp is never closed: no resp.Body.Close\(\)`
	if err != nil {
		return nil, err
	}
	var v map[string]any
	err = json.NewDecoder(resp.Body).Decode(&v)
	return v, err
}

func fetchOK(c *http.Client, u string) (int, error) {
	resp, err := c.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, nil
}

type holder struct{ f *os.File }

func keep(p string) (*holder, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	return &holder{f: f}, nil
}

func consume(f *os.File) {}

func pass(p string) {
	f, _ := os.Open(p)
	consume(f)
}

func listenFd(fd int) (net.Listener, error) {
	f := os.NewFile(uintptr(fd), fmt.Sprintf("fd@%d", fd)) // want `f is never closed`
	return net.FileListener(f)
}

func listenFdOK(fd int) (net.Listener, error) {
	f := os.NewFile(uintptr(fd), "fd")
	defer f.Close()
	return net.FileListener(f)
}
