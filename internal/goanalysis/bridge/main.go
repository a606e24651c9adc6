// Command bridge is the module fetch's only way out of its sandbox
// (docs/go-analysis.md, "Threat model of the fetch"): run inside the
// sandbox's network namespace, it listens on an address of that
// namespace's own loopback, forwards each connection to the Unix socket
// of quorum's forwarding proxy, bound into the sandbox, and runs the go
// command, whose exit status it exits with.
//
// quorum builds it from this file, which it embeds, with the go command it
// already requires (internal/goanalysis, confine.go).
//
//	bridge 127.0.0.1:PORT /path/to/proxy.sock go list …
package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: bridge <tcp address> <unix socket> <command> [arguments]")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "quorum bridge:", err)
		os.Exit(1)
	}
	go serve(ln, os.Args[2])
	cmd := exec.Command(os.Args[3], os.Args[4:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		os.Exit(exit.ExitCode())
	case err != nil:
		fmt.Fprintln(os.Stderr, "quorum bridge:", err)
		os.Exit(1)
	}
}

// serve forwards each connection ln accepts to the Unix socket at sock.
func serve(ln net.Listener, sock string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			u, err := net.Dial("unix", sock)
			if err != nil {
				return
			}
			defer u.Close()
			done := make(chan struct{})
			go func() {
				io.Copy(u, c)
				u.(*net.UnixConn).CloseWrite()
				close(done)
			}()
			io.Copy(c, u)
			c.(*net.TCPConn).CloseWrite()
			<-done
		}()
	}
}
