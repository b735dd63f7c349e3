package embedded_test

import (
	"context"
	"net"
	"testing"

	"github.com/berthhq/berth/internal/nameserver"
	"github.com/berthhq/berth/internal/nameserver/embedded"
	"github.com/berthhq/berth/internal/nameserver/nameservertest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	nameservertest.Exercise(t, func(t *testing.T, o nameservertest.Options) (nameserver.Publisher, string) {
		mem := embedded.NewMemory()
		return mem, serve(t, embedded.New(mem, embedded.Options{AllowTransfer: o.AllowTransfer}))
	})
}

// serve runs srv on a port of 127.0.0.1 (UDP and TCP) until t ends, and checks it
// then stops without an error.
func serve(t *testing.T, srv *embedded.Server) string {
	t.Helper()
	pc, ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, pc, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return pc.LocalAddr().String()
}

// listen binds UDP and TCP to one free port of 127.0.0.1, trying again when TCP's
// is taken.
func listen(t *testing.T) (net.PacketConn, net.Listener) {
	t.Helper()
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			return pc, ln
		}
		pc.Close()
	}
	t.Fatal("no port free for both UDP and TCP")
	return nil, nil
}
