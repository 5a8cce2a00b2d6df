// Package webhook delivers agentry's push notifications and decides which
// addresses they may reach.
//
// A client registering a webhook makes the server send HTTP requests to a
// URL of its choosing, so a webhook is a way into whatever the server can
// reach: its own loopback services, the private network it sits in, a
// cloud metadata endpoint. Unless private webhooks are allowed, an address
// IANA's special-purpose registries (iana-ipv4-special-registry,
// iana-ipv6-special-registry) mark as not globally reachable, a multicast
// address, or an IPv6 address outside global unicast (2000::/3) is
// refused: once in the URL (see Special), and again on every connection
// the sender makes (see NewSender), so that a host name resolving to such
// an address — at registration or only later, by DNS rebinding — is
// refused too.
package webhook

import (
	"net/netip"
)

// Range is a block of special-purpose addresses.
type Range struct {
	// Prefix is the block.
	Prefix netip.Prefix
	// Name says what the block is, for error messages.
	Name string
	// embedsIPv4: the last 32 bits are an IPv4 address, which decides.
	embedsIPv4 bool
}

func r(prefix, name string) Range { return Range{Prefix: netip.MustParsePrefix(prefix), Name: name} }

// ipv4Ranges are the IPv4 blocks refused: the special-purpose registry's
// blocks that are not globally reachable, and multicast. 192.0.0.0/24 is
// refused whole, its two globally reachable anycast addresses included
// (no webhook is served there). Globally reachable special blocks
// (192.31.196.0/24, 192.52.193.0/24, 192.175.48.0/24: AS112 and AMT) are
// ordinary destinations.
var ipv4Ranges = []Range{
	r("0.0.0.0/8", `"this network" (0.0.0.0/8)`),
	r("10.0.0.0/8", "a private network (10.0.0.0/8)"),
	r("100.64.0.0/10", "the shared address space of carrier-grade NAT (100.64.0.0/10)"),
	r("127.0.0.0/8", "this machine (loopback, 127.0.0.0/8)"),
	r("169.254.0.0/16", "a link-local address (169.254.0.0/16, cloud metadata services among them)"),
	r("172.16.0.0/12", "a private network (172.16.0.0/12)"),
	r("192.0.0.0/24", "IETF protocol assignments (192.0.0.0/24)"),
	r("192.0.2.0/24", "documentation addresses (TEST-NET-1, 192.0.2.0/24)"),
	r("192.88.99.0/24", "the deprecated 6to4 relay anycast (192.88.99.0/24)"),
	r("192.168.0.0/16", "a private network (192.168.0.0/16)"),
	r("198.18.0.0/15", "benchmarking addresses (198.18.0.0/15)"),
	r("198.51.100.0/24", "documentation addresses (TEST-NET-2, 198.51.100.0/24)"),
	r("203.0.113.0/24", "documentation addresses (TEST-NET-3, 203.0.113.0/24)"),
	r("224.0.0.0/4", "a multicast address (224.0.0.0/4)"),
	r("255.255.255.255/32", "the limited broadcast address (255.255.255.255)"),
	r("240.0.0.0/4", "reserved addresses (240.0.0.0/4)"),
}

// ipv6Ranges are the IPv6 blocks refused, first match wins: the
// special-purpose registry's blocks that are not globally reachable,
// multicast, and anything else outside global unicast 2000::/3. The
// IPv4-mapped and NAT64 blocks are decided by the IPv4 address they
// carry.
var ipv6Ranges = []Range{
	r("::/128", "the unspecified address (::)"),
	r("::1/128", "this machine (loopback, ::1)"),
	{Prefix: netip.MustParsePrefix("::ffff:0:0/96"), Name: "an IPv4-mapped address (::ffff:0:0/96)", embedsIPv4: true},
	{Prefix: netip.MustParsePrefix("64:ff9b::/96"), Name: "a NAT64 address (64:ff9b::/96)", embedsIPv4: true},
	r("64:ff9b:1::/48", "local-use IPv4/IPv6 translation (64:ff9b:1::/48)"),
	r("100::/64", "the discard-only block (100::/64)"),
	r("100:0:0:1::/64", "the dummy IPv6 prefix (100:0:0:1::/64)"),
	r("2001:db8::/32", "documentation addresses (2001:db8::/32)"),
	r("2001::/23", "IETF protocol assignments (2001::/23, Teredo among them)"),
	r("2002::/16", "6to4 addresses (2002::/16), which carry an IPv4 address"),
	r("3fff::/20", "documentation addresses (3fff::/20)"),
	r("5f00::/16", "segment routing identifiers (5f00::/16)"),
	r("fc00::/7", "a private network (unique local, fc00::/7)"),
	r("fe80::/10", "a link-local address (fe80::/10)"),
	r("fec0::/10", "a site-local address (deprecated, fec0::/10)"),
	r("ff00::/8", "a multicast address (ff00::/8)"),
}

// globalUnicast is the only IPv6 block IANA allocates for global unicast;
// what lies outside it and in no named range is reserved.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// Special reports whether a webhook may not reach addr unless private
// webhooks are allowed, and the range that says why.
func Special(addr netip.Addr) (Range, bool) {
	addr = addr.WithZone("")
	if addr.Is4() {
		return lookup(ipv4Ranges, addr)
	}
	if !addr.Is6() {
		return Range{Name: "an invalid address"}, true
	}
	if rg, ok := lookup(ipv6Ranges, addr); ok {
		if !rg.embedsIPv4 {
			return rg, true
		}
		b := addr.As16()
		v4 := netip.AddrFrom4([4]byte(b[12:]))
		if inner, ok := lookup(ipv4Ranges, v4); ok {
			inner.Name += " inside " + rg.Name
			return inner, true
		}
		return Range{}, false
	}
	if !globalUnicast.Contains(addr) {
		return Range{Prefix: globalUnicast, Name: "a reserved IPv6 address (outside global unicast, 2000::/3)"}, true
	}
	return Range{}, false
}

func lookup(ranges []Range, addr netip.Addr) (Range, bool) {
	for _, rg := range ranges {
		if rg.Prefix.Contains(addr) {
			return rg, true
		}
	}
	return Range{}, false
}
