package wire

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// dial connects to the server at addr, an IP literal and a port, with the
// socket calls themselves rather than package net: importing net links
// the C library into a plain `go build` or `go install` of prsm-hook (for
// net's cgo resolver, which a loopback address never needs), and a hook
// process pays for loading it at every start. The socket is non-blocking,
// so the runtime's poller waits on it, and the deadlines the caller sets
// stop a blocked connect, write or read.
func dial(ctx context.Context, addr string) (*os.File, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: not an address and port: %w", addr, err)
	}
	var sa syscall.Sockaddr
	domain := syscall.AF_INET
	if ip := ap.Addr().Unmap(); ip.Is4() {
		sa = &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ip.As4()}
	} else {
		domain = syscall.AF_INET6
		sa = &syscall.SockaddrInet6{Port: int(ap.Port()), Addr: ip.As16()}
	}
	fd, err := syscall.Socket(domain, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	cerr := syscall.Connect(fd, sa)
	if cerr != nil && cerr != syscall.EINPROGRESS && cerr != syscall.EINTR {
		syscall.Close(fd)
		return nil, fmt.Errorf("dial %s: %w", addr, os.NewSyscallError("connect", cerr))
	}
	f := os.NewFile(uintptr(fd), "tcp "+addr)
	if cerr == nil {
		return f, nil
	}
	// The connect goes on in the background: wait until the socket is
	// writable, then read its outcome.
	stop := context.AfterFunc(ctx, func() { f.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	var soerr error
	werr := rc.Write(func(fd uintptr) bool {
		n, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_ERROR)
		switch {
		case err != nil:
			soerr = os.NewSyscallError("getsockopt", err)
		case syscall.Errno(n) == syscall.EINPROGRESS || syscall.Errno(n) == syscall.EALREADY || syscall.Errno(n) == syscall.EINTR:
			return false // not yet: wait for the socket to be writable
		case n != 0:
			soerr = os.NewSyscallError("connect", syscall.Errno(n))
		default:
			// No error yet: connected only once the socket has a peer.
			if _, err := syscall.Getpeername(int(fd)); err != nil {
				return false
			}
		}
		return true
	})
	if werr == nil {
		werr = soerr
	}
	if werr != nil {
		f.Close()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("dial %s: %w", addr, werr)
	}
	f.SetWriteDeadline(time.Time{})
	return f, nil
}
