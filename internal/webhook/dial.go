package webhook

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// RefusedAddressError is an attempt refused because its endpoint's host
// resolved to an address that is not public.
type RefusedAddressError struct {
	Addr  netip.Addr
	Class string
}

func (e *RefusedAddressError) Error() string {
	return fmt.Sprintf("address %s is %s: refused (quorum serve --webhook-allow-private allows it)", e.Addr, e.Class)
}

// refusedPrefixes are the non-public ranges deliveries may not reach, by
// the class an error names.
var refusedPrefixes = []struct {
	prefix netip.Prefix
	class  string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified (this network)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (CGNAT)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("fc00::/7"), "private (unique local)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	// RFC 6890's IETF protocol assignments (Teredo, 2001::/32, is judged
	// by the addresses it carries before this).
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignment"},
}

var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
	teredo  = netip.MustParsePrefix("2001::/32")
	v4Compt = netip.MustParsePrefix("::/96")
	// siit is RFC 2765's IPv4-translated form, ::ffff:0:a.b.c.d.
	siit = netip.MustParsePrefix("::ffff:0:0:0/96")
)

// classify names the class of a non-public address, or "" for a public
// one. IPv4 addresses embedded in IPv6 (mapped, compatible, NAT64, 6to4,
// Teredo) are judged by the IPv4 address they carry. The local-use NAT64
// prefix 64:ff9b:1::/48 is refused outright: where it carries the IPv4
// address depends on the prefix length its network chose (RFC 6052), and
// it is local by definition.
func classify(a netip.Addr) string {
	a = a.WithZone("")
	if a.Is4In6() {
		if c := classify(a.Unmap()); c != "" {
			return "IPv4-mapped " + c
		}
		return ""
	}
	if a.Is6() {
		b := a.As16()
		var v4 [4]byte
		switch {
		case nat64.Contains(a):
			copy(v4[:], b[12:])
			if c := classify(netip.AddrFrom4(v4)); c != "" {
				return "NAT64 " + c
			}
			return ""
		case sixTo4.Contains(a):
			copy(v4[:], b[2:6])
			if c := classify(netip.AddrFrom4(v4)); c != "" {
				return "6to4 " + c
			}
		case teredo.Contains(a):
			// The Teredo server's address is bits 32-63; the client's
			// public address is bits 96-127, inverted (RFC 4380).
			copy(v4[:], b[4:8])
			if c := classify(netip.AddrFrom4(v4)); c != "" {
				return "Teredo " + c
			}
			for i := range v4 {
				v4[i] = ^b[12+i]
			}
			if c := classify(netip.AddrFrom4(v4)); c != "" {
				return "Teredo " + c
			}
			return ""
		case siit.Contains(a):
			copy(v4[:], b[12:])
			if c := classify(netip.AddrFrom4(v4)); c != "" {
				return "IPv4-translated " + c
			}
			return ""
		case v4Compt.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
			copy(v4[:], b[12:])
			if c := classify(netip.AddrFrom4(v4)); c != "" {
				return "IPv4-compatible " + c
			}
		}
	}
	for _, r := range refusedPrefixes {
		if r.prefix.Contains(a) {
			return r.class
		}
	}
	return ""
}

// checkAddress refuses a dialled address ("host:port", already resolved)
// that is not public.
func checkAddress(address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, err)
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("dial %s: not an IP address: %w", address, err)
	}
	if c := classify(a); c != "" {
		return &RefusedAddressError{Addr: a.WithZone(""), Class: c}
	}
	return nil
}

// newDialer returns the dialer deliveries connect with. Unless
// allowPrivate, its Control refuses every non-public address; it runs on
// each address the resolver returned, just before connecting, so a name
// that resolves differently later (DNS rebinding) is checked on what it
// resolves to then.
func newDialer(allowPrivate bool, timeout time.Duration, resolver *net.Resolver) *net.Dialer {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Resolver: resolver}
	if !allowPrivate {
		d.Control = func(_, address string, _ syscall.RawConn) error { return checkAddress(address) }
	}
	return d
}
