// Package testnet finds free ports on the loopback for tests that start servers of
// their own (berthd, PostgreSQL, a nameserver). It imports nothing of Berth's, so
// that any package's tests may use it.
package testnet

import (
	"net"
	"testing"
)

// FreeAddr is a 127.0.0.1:port address that was free a moment ago: the port is
// released before it returns, for a server to take it (another process may take it
// first, which the test then sees as that server failing to listen).
func FreeAddr(t testing.TB) string {
	t.Helper()
	return free(t).String()
}

// FreePort is the port of a FreeAddr.
func FreePort(t testing.TB) int {
	t.Helper()
	return free(t).Port
}

func free(t testing.TB) *net.TCPAddr {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr)
}

// FreeDNSAddr is a 127.0.0.1:port address whose port was free a moment ago on UDP
// and on TCP both, for a nameserver (berthd serve --dns-addr answers on both).
func FreeDNSAddr(t testing.TB) string {
	t.Helper()
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		pc.Close()
		if err == nil {
			ln.Close()
			return pc.LocalAddr().String()
		}
	}
	t.Fatal("no port free on both UDP and TCP")
	return ""
}
