package webhook

import (
	"context"
	"encoding/binary"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quorum-review/quorum/internal/storetest"
)

// An IPv4 address carried inside IPv6 is judged by that IPv4 address,
// whichever way it is carried; the same form around a public address is
// public.
func TestClassifyEmbeddedIPv4(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ addr, class string }{
		// IPv4-mapped, ::ffff:0:0/96.
		{"::ffff:127.0.0.1", "IPv4-mapped loopback"},
		{"::ffff:7f00:1", "IPv4-mapped loopback"},
		{"::ffff:0:0", "IPv4-mapped unspecified (this network)"},
		{"::ffff:192.168.0.1", "IPv4-mapped private"},
		{"::ffff:100.64.0.1", "IPv4-mapped shared address space (CGNAT)"},
		{"::ffff:8.8.8.8", ""},
		// IPv4-compatible, ::/96 (deprecated).
		{"::127.0.0.1", "IPv4-compatible loopback"},
		{"::10.0.0.1", "IPv4-compatible private"},
		{"::169.254.169.254", "IPv4-compatible link-local"},
		// NAT64, well-known prefix 64:ff9b::/96.
		{"64:ff9b::127.0.0.1", "NAT64 loopback"},
		{"64:ff9b::a9fe:a9fe", "NAT64 link-local"},
		{"64:ff9b::6440:1", "NAT64 shared address space (CGNAT)"},
		{"64:ff9b::808:808", ""},
		// NAT64, local-use prefix 64:ff9b:1::/48: refused whatever it carries.
		{"64:ff9b:1::7f00:1", "local-use NAT64"},
		{"64:ff9b:1:7f00:1::", "local-use NAT64"},
		{"64:ff9b:1::808:808", "local-use NAT64"},
		// 6to4, 2002::/16: the IPv4 address is bits 16-47.
		{"2002:7f00:1::", "6to4 loopback"},
		{"2002:a00:1::1", "6to4 private"},
		{"2002:a9fe:a9fe::1", "6to4 link-local"},
		{"2002:808:808::1", ""},
		// Teredo, 2001::/32: the server is bits 32-63, the client bits
		// 96-127 inverted.
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo loopback"},   // client 127.0.0.1
		{"2001:0:4136:e378:8000:63bf:f5ff:fffe", "Teredo private"},    // client 10.0.0.1
		{"2001:0:4136:e378:8000:63bf:5601:5601", "Teredo link-local"}, // client 169.254.169.254
		{"2001:0:a00:1:8000:63bf:f7f7:f7f7", "Teredo private"},        // server 10.0.0.1
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", ""},                  // 65.54.227.120, client 8.8.8.8
		{"2001:db8::1", "documentation"},                              // beside Teredo, not in it
		// IPv4-translated (SIIT), ::ffff:0:0:0/96.
		{"::ffff:0:7f00:1", "IPv4-translated loopback"},
		{"::ffff:0:a00:1", "IPv4-translated private"},
		{"::ffff:0:808:808", ""},
		// IETF protocol assignments, 2001::/23, beyond Teredo.
		{"2001:2::1", "IETF protocol assignment"},
		{"2606:4700:4700::1111", ""},
	} {
		a := netip.MustParseAddr(tc.addr)
		if got := classify(a); got != tc.class {
			t.Errorf("classify(%s) = %q, want %q", tc.addr, got, tc.class)
		}
		err := checkAddress(net.JoinHostPort(tc.addr, "443"))
		if tc.class == "" && err != nil || tc.class != "" && (err == nil || !strings.Contains(err.Error(), "is "+tc.class+": refused")) {
			t.Errorf("checkAddress(%s) = %v", tc.addr, err)
		}
	}
}

// A host name whose only answer is an IPv4-mapped loopback address is
// refused when the attempt connects; with --webhook-allow-private the same
// name reaches the receiver, so it was the check that refused it.
func TestSSRFMappedAnswer(t *testing.T) {
	t.Parallel()
	bd := setup(t, storetest.Backend{Name: "sqlite", Open: storetest.SQLite})
	var hits atomic.Int32
	srv := receiver(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1) })
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	resolver := fakeDNS(t, netip.MustParseAddr("::ffff:127.0.0.1"))

	hook := bd.endpoint(t, bd.account, "http://hooks.quorum.test:"+port+"/hook", "s3cret")
	d := bd.record(t, bd.account)[hook]
	bd.w = &Worker{DB: bd.db, Version: "t", Now: bd.clock.Now, AttemptTimeout: 5 * time.Second, Resolver: resolver}
	if err := bd.work(t, d, 1); err == nil {
		t.Fatal("delivered to a mapped loopback answer without --webhook-allow-private")
	}
	_, attempts := bd.delivery(t, d)
	if len(attempts) != 1 || attempts[0].StatusCode != nil || !strings.Contains(attempts[0].Error, "is loopback: refused") {
		t.Fatalf("attempts %+v, want one refused as loopback", attempts)
	}
	if hits.Load() != 0 {
		t.Fatal("the receiver was reached")
	}

	bd.w = &Worker{DB: bd.db, Version: "t", Now: bd.clock.Now, AttemptTimeout: 5 * time.Second, Resolver: resolver, AllowPrivate: true}
	bd.clock.Advance(RetryDelays[0])
	if err := bd.work(t, d, 2); err != nil || hits.Load() != 1 {
		t.Fatalf("with the flag: %v, %d requests", err, hits.Load())
	}
}

// fakeDNS is a resolver whose every AAAA question is answered with addr
// and every other question with no records, by a UDP server of the test.
func fakeDNS(t *testing.T, addr netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := dnsAnswer(buf[:n], addr); resp != nil {
				pc.WriteTo(resp, from)
			}
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// dnsAnswer answers a query of one question (RFC 1035 §4.1).
func dnsAnswer(q []byte, addr netip.Addr) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:]) != 1 {
		return nil
	}
	end := 12
	for end < len(q) && q[end] != 0 {
		end += int(q[end]) + 1
	}
	end += 5 // the root label, QTYPE, QCLASS
	if end > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[end-4:])
	resp := append([]byte{}, q[:end]...)
	binary.BigEndian.PutUint16(resp[2:], 0x8180) // response, recursion desired and available, no error
	binary.BigEndian.PutUint16(resp[8:], 0)      // no authority records
	binary.BigEndian.PutUint16(resp[10:], 0)     // no additional records (drops EDNS)
	if qtype != 28 {
		binary.BigEndian.PutUint16(resp[6:], 0)
		return resp
	}
	binary.BigEndian.PutUint16(resp[6:], 1)
	a := addr.As16()
	resp = append(resp, 0xc0, 12, 0, 28, 0, 1, 0, 0, 0, 60, 0, 16) // the question's name, AAAA, IN, TTL 60
	return append(resp, a[:]...)
}
