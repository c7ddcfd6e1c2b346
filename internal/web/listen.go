package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Addr turns a listen address given on the command line into one for net.Listen: a
// bare port ("9249") means loopback, "host:port" is taken as given, and ":9249" (an
// empty host) means every interface. It reports whether the address reaches beyond
// loopback, so the caller can say so.
func Addr(flag string) (addr string, public bool, err error) {
	if flag == "" {
		return "", false, errors.New("empty address")
	}
	if _, err := strconv.Atoi(flag); err == nil {
		flag = "127.0.0.1:" + flag
	}
	host, port, err := net.SplitHostPort(flag)
	if err != nil {
		return "", false, fmt.Errorf("address %q: give host:port (such as 127.0.0.1:8081) or a port", flag)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", false, fmt.Errorf("address %q: port %q is not a number from 0 to 65535", flag, port)
	}
	switch {
	case host == "":
		return flag, true, nil
	case host == "localhost":
		return flag, false, nil
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return flag, ip == nil || !ip.IsLoopback(), nil
}

// Server is an HTTP server run by Serve, stopped by Close.
type Server struct {
	Addr string // where it listens, with the port it got
	srv  *http.Server
	done sync.WaitGroup
}

// Serve listens on addr (see Addr) and serves h until Close.
func Serve(addr string, h http.Handler) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: l.Addr().String(), srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		s.srv.Serve(l) // returns http.ErrServerClosed after Close
	}()
	return s, nil
}

// Close stops the server, letting requests in flight finish for a moment, and waits
// until it stopped.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if s.srv.Shutdown(ctx) != nil {
		s.srv.Close()
	}
	s.done.Wait()
}
