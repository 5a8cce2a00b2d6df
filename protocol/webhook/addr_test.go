package webhook

import (
	"net/netip"
	"strings"
	"testing"
)

// TestSpecial is the table of IANA's special-purpose blocks: for each,
// its first and last address are refused and the neighbours just outside
// (where they are ordinary addresses) are not. The table is written out
// rather than derived from the ranges, so that a block dropped or
// mistyped there shows here.
func TestSpecial(t *testing.T) {
	refused := []struct{ addr, name string }{
		{"0.0.0.0", "this network"}, {"0.255.255.255", "this network"},
		{"10.0.0.0", "10.0.0.0/8"}, {"10.255.255.255", "10.0.0.0/8"},
		{"100.64.0.0", "100.64.0.0/10"}, {"100.127.255.255", "100.64.0.0/10"},
		{"127.0.0.0", "loopback"}, {"127.255.255.255", "loopback"},
		{"169.254.0.0", "link-local"}, {"169.254.169.254", "link-local"}, {"169.254.255.255", "link-local"},
		{"172.16.0.0", "172.16.0.0/12"}, {"172.31.255.255", "172.16.0.0/12"},
		{"192.0.0.0", "192.0.0.0/24"}, {"192.0.0.255", "192.0.0.0/24"},
		{"192.0.2.0", "TEST-NET-1"}, {"192.0.2.255", "TEST-NET-1"},
		{"192.88.99.0", "6to4 relay"}, {"192.88.99.255", "6to4 relay"},
		{"192.168.0.0", "192.168.0.0/16"}, {"192.168.255.255", "192.168.0.0/16"},
		{"198.18.0.0", "benchmarking"}, {"198.19.255.255", "benchmarking"},
		{"198.51.100.0", "TEST-NET-2"}, {"198.51.100.255", "TEST-NET-2"},
		{"203.0.113.0", "TEST-NET-3"}, {"203.0.113.255", "TEST-NET-3"},
		{"224.0.0.0", "multicast"}, {"239.255.255.255", "multicast"},
		{"240.0.0.0", "reserved"}, {"255.255.255.254", "reserved"},
		{"255.255.255.255", "broadcast"},

		{"::", "unspecified"},
		{"::1", "loopback"},
		{"::2", "reserved IPv6"}, {"::7f00:1", "reserved IPv6"}, // IPv4-compatible, deprecated
		{"::ffff:0.0.0.0", "IPv4-mapped"}, {"::ffff:127.0.0.1", "loopback"}, {"::ffff:10.1.2.3", "10.0.0.0/8"},
		{"::ffff:100.64.0.1", "100.64.0.0/10"}, {"::ffff:198.18.0.1", "benchmarking"},
		{"::ffff:255.255.255.255", "broadcast"},
		{"64:ff9b::127.0.0.1", "NAT64"}, {"64:ff9b::10.0.0.1", "10.0.0.0/8"}, {"64:ff9b::169.254.169.254", "link-local"},
		{"64:ff9b::", "NAT64"},
		{"64:ff9b:1::", "64:ff9b:1::/48"}, {"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "64:ff9b:1::/48"},
		{"100::", "discard"}, {"100::ffff:ffff:ffff:ffff", "discard"},
		{"100:0:0:1::", "dummy"}, {"100:0:0:1:ffff:ffff:ffff:ffff", "dummy"},
		{"2001::", "2001::/23"}, {"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "2001::/23"},
		{"2001:db8::", "2001:db8::/32"}, {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8::/32"},
		{"2002::", "6to4"}, {"2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "6to4"},
		{"3fff::", "3fff::/20"}, {"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff::/20"},
		{"5f00::", "5f00::/16"}, {"5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "5f00::/16"},
		{"fc00::", "unique local"}, {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "unique local"},
		{"fe80::", "link-local"}, {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "link-local"}, {"fe80::1%eth0", "link-local"},
		{"fec0::", "site-local"},
		{"ff00::", "multicast"}, {"ff02::1", "multicast"}, {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "multicast"},
		{"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved IPv6"}, {"4000::", "reserved IPv6"},
	}
	for _, c := range refused {
		addr := netip.MustParseAddr(c.addr)
		rg, bad := Special(addr)
		if !bad {
			t.Errorf("Special(%s): allowed, want refused as %s", c.addr, c.name)
			continue
		}
		if !strings.Contains(rg.Name, c.name) {
			t.Errorf("Special(%s) = %q, want it to say %q", c.addr, rg.Name, c.name)
		}
	}
	allowed := []string{
		"1.0.0.0", "9.255.255.255", "11.0.0.0",
		"100.63.255.255", "100.128.0.0",
		"126.255.255.255", "128.0.0.0",
		"169.253.255.255", "169.255.0.0",
		"172.15.255.255", "172.32.0.0",
		"191.255.255.255", "192.0.1.0", "192.0.3.0",
		"192.31.196.1", "192.52.193.1", "192.175.48.1", // globally reachable AS112 and AMT
		"192.88.98.255", "192.88.100.0",
		"192.167.255.255", "192.169.0.0",
		"198.17.255.255", "198.20.0.0",
		"198.51.99.255", "198.51.101.0",
		"203.0.112.255", "203.0.114.0",
		"223.255.255.255",
		"8.8.8.8", "1.1.1.1",
		"::ffff:8.8.8.8", "64:ff9b::8.8.8.8",
		"2000::", "2001:200::", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db9::",
		"2001:4860:4860::8888", "2003::", "2606:4700:4700::1111",
		"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff:1000::",
	}
	for _, a := range allowed {
		if rg, bad := Special(netip.MustParseAddr(a)); bad {
			t.Errorf("Special(%s): refused as %q, want allowed", a, rg.Name)
		}
	}
}
