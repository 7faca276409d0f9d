// Package silentldap is a directory that never answers: a TCP listener on
// loopback that accepts every connection and never writes a byte, which is
// how a hung or overloaded LDAP server looks to its clients. Tests point
// aclc's LDAP resolver at it to show that no lookup, decision or shutdown
// waits on it.
package silentldap

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aclc-dev/aclc/tests/slapd"
)

// Server is a listening silent peer; Start closes it when the test ends.
type Server struct {
	Port int

	ln       net.Listener
	accepted atomic.Int64
	mu       sync.Mutex
	conns    []net.Conn
	done     chan struct{}
}

// Start listens on 127.0.0.1 on a free port and accepts until the test
// ends. The connections are held open, unread and unanswered.
func Start(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Port: ln.Addr().(*net.TCPAddr).Port, ln: ln, done: make(chan struct{})}
	go s.accept()
	t.Cleanup(s.Close)
	return s
}

func (s *Server) accept() {
	defer close(s.done)
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
	}
}

// Accepted counts the connections accepted so far: one per lookup that
// reached the directory.
func (s *Server) Accepted() int64 { return s.accepted.Load() }

// Close stops listening and drops the held connections.
func (s *Server) Close() {
	_ = s.ln.Close()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
}

// Secret returns a valid YuniKorn LDAP secret that points at the silent
// peer; it is slapd's test secret with this port.
func (s *Server) Secret() map[string]string {
	return map[string]string{
		"Host": "127.0.0.1", "Port": strconv.Itoa(s.Port), "BaseDN": slapd.Suffix, "Filter": slapd.UserFilter,
		"GroupAttr": "memberOf", "ReturnAttr": "memberOf", "BindUser": slapd.ReaderDN, "BindPassword": slapd.ReaderPW,
		"SSL": "false", "Insecure": "false",
	}
}

// SecretDir writes the secret, with overrides, into a new directory under
// t.TempDir, mounted as Kubernetes mounts a Secret.
func (s *Server) SecretDir(t testing.TB, overrides map[string]string) string {
	t.Helper()
	kv := s.Secret()
	for k, v := range overrides {
		kv[k] = v
	}
	dir := t.TempDir()
	if err := slapd.WriteSecret(dir, kv); err != nil {
		t.Fatal(err)
	}
	return dir
}
