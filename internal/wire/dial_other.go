//go:build !linux

package wire

import (
	"context"
	"net"
)

// dial connects to the server at addr (host:port).
func dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}
