package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
)

// loopbackOnly refuses any target that is not on this machine's loopback
// address: the load generator never sends traffic anywhere else.
func loopbackOnly(target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return fmt.Errorf("target %q: %w", target, err)
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	if u.Scheme != "http" || ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("target %q: only http://127.0.0.1 targets are allowed", target)
	}
	return nil
}

// run is the outcome of driving one target for a while.
type run struct {
	Requests int
	Elapsed  time.Duration
	Bytes    int64
	Lat      []time.Duration // one per request, unsorted
	CPU      time.Duration   // the server process's CPU time over the run
}

func (r run) cpuPct() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return 100 * r.CPU.Seconds() / r.Elapsed.Seconds()
}

func (r run) cpuPerReq() float64 {
	if r.Requests == 0 {
		return 0
	}
	return float64(r.CPU.Microseconds()) / float64(r.Requests)
}

// add pools another run of the same target into r.
func (r *run) add(o run) {
	r.Requests += o.Requests
	r.Elapsed += o.Elapsed
	r.Bytes += o.Bytes
	r.CPU += o.CPU
	r.Lat = append(r.Lat, o.Lat...)
}

// RPS is requests per second over the measured time.
func (r run) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// Pct returns the q-th percentile (0 < q ≤ 100) of the latencies, by the
// nearest-rank method over the sorted slice of every request's latency.
func (r run) Pct(q float64) time.Duration {
	if len(r.Lat) == 0 {
		return 0
	}
	s := slices.Clone(r.Lat)
	slices.Sort(s)
	return pct(s, q)
}

func pct(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(q/100*float64(len(sorted)) + 0.999999)
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}

// client is a keep-alive HTTP client that holds up to conns connections to
// one host, without compression (the servers send identity bodies).
func newClient(conns int) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			MaxIdleConns:        conns,
			MaxIdleConnsPerHost: conns,
			MaxConnsPerHost:     conns,
			IdleConnTimeout:     time.Minute,
			DisableCompression:  true,
			ForceAttemptHTTP2:   false,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		},
		Timeout: 30 * time.Second,
	}
}

// drive sends GET target from conns workers, each on its own keep-alive
// connection, back to back for d, and records every request's latency. Any
// response other than 200 with a body of wantBytes (when wantBytes > 0) is
// an error: the run stops and reports it.
func drive(ctx context.Context, client *http.Client, target string, header http.Header, conns int, d time.Duration, wantBytes int64) (run, error) {
	if err := loopbackOnly(target); err != nil {
		return run{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		total    run
		firstErr error
	)
	start := time.Now()
	deadline := start.Add(d)
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 4096)
			var n int
			var bytes int64
			var err error
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(deadline) {
					break
				}
				var got int64
				got, err = get(ctx, client, target, header)
				if err == nil && wantBytes > 0 && got != wantBytes {
					err = fmt.Errorf("GET %s: body of %d bytes, want %d", target, got, wantBytes)
				}
				if err != nil {
					if ctx.Err() != nil {
						err = nil
					}
					break
				}
				lat = append(lat, time.Since(t0))
				n++
				bytes += got
			}
			mu.Lock()
			defer mu.Unlock()
			total.Requests += n
			total.Bytes += bytes
			total.Lat = append(total.Lat, lat...)
			if err != nil && firstErr == nil {
				firstErr = err
				cancel()
			}
		}()
	}
	wg.Wait()
	total.Elapsed = time.Since(start)
	return total, firstErr
}

// get does one request and reads the whole body; a status other than 200
// is an error.
func get(ctx context.Context, client *http.Client, target string, header http.Header) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, err
	}
	req.Header = header
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return n, fmt.Errorf("GET %s: read body: %w", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		return n, fmt.Errorf("GET %s: status %d, want 200", target, resp.StatusCode)
	}
	return n, nil
}

// getBody does one request and returns the body of a 200.
func getBody(ctx context.Context, client *http.Client, target string, header http.Header) ([]byte, error) {
	if err := loopbackOnly(target); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header = header
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d: %s", target, resp.StatusCode, body)
	}
	return body, nil
}
