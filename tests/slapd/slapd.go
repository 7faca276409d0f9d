// Package slapd starts a throwaway OpenLDAP server on loopback for tests: its
// own slapd.conf, schema, database and certificate in a temporary directory,
// plain LDAP and LDAPS on free ports, and AD-style memberOf strings loaded
// through the server.
//
// # Notes
//
//   - The memberof overlay is not used: its memberOf is operational,
//     DN-syntax and normalised to lower case (cn=Devs,...), on which YuniKorn
//     panics. A small schema (ad-lite) stores memberOf and sAMAccountName as
//     plain strings instead, the way Active Directory presents them.
//   - slapd runs in the foreground (-d 0) as a child of the test process, so
//     it is killed with the test binary's own cleanup; every start and stop
//     is bounded in time.
//   - Tests skip when slapd is not installed, unless ACLC_REQUIRE_SLAPD is
//     set (make test sets it): then they fail.
//
// See the placement specification §6.7.
package slapd

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// The directory's fixed names and passwords.
const (
	Suffix       = "dc=example,dc=org"
	AdminDN      = "cn=admin," + Suffix
	AdminPW      = "adminpw"
	ReaderDN     = "cn=reader,ou=system," + Suffix
	ReaderPW     = "readerpw"
	PeopleDN     = "ou=people," + Suffix
	UserFilter   = "(&(objectClass=inetOrgPerson)(sAMAccountName=%s))"
	startTimeout = 15 * time.Second
	stopTimeout  = 5 * time.Second
)

// RequireEnv makes a missing slapd a test failure instead of a skip.
const RequireEnv = "ACLC_REQUIRE_SLAPD"

// Users are the entries loaded at start: user name → memberOf values, as
// the placement specification's recipe lists them, plus the corner cases
// of YuniKorn's CN= parsing.
var Users = map[string][]string{
	"alice": {"CN=Devs,OU=groups,DC=example,DC=org", "CN=ops team,OU=groups,DC=example,DC=org", "CN=alice,OU=groups,DC=example,DC=org"},
	"bob":   {"cn=lower,ou=groups,dc=example,dc=org"},
	"carol": {`CN=a\,b,OU=groups,DC=example,DC=org`},
	"dave":  nil,
	"erin":  {"xCN=y,OU=groups,DC=example,DC=org", "CN=,OU=groups,DC=example,DC=org"},
	"frank": {"OU=x,DC=example,DC=org"},
	"gina":  {"CN=Devs,OU=groups,DC=example,DC=org", "CN=admins,OU=groups,DC=example,DC=org"},
}

// Server is a running slapd.
type Server struct {
	Dir       string // the temporary directory holding everything
	LDAPPort  int
	LDAPSPort int
	CertFile  string // the server's self-signed certificate (CN localhost, SAN 127.0.0.1)

	cmd    *exec.Cmd
	exited chan struct{}
	logf   *os.File
}

const schema = `attributetype ( 1.3.6.1.4.1.32473.1.1.1 NAME 'memberOf'
	EQUALITY caseIgnoreMatch SUBSTR caseIgnoreSubstringsMatch
	SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )
attributetype ( 1.3.6.1.4.1.32473.1.1.2 NAME 'sAMAccountName'
	EQUALITY caseIgnoreMatch SUBSTR caseIgnoreSubstringsMatch
	SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
objectclass ( 1.3.6.1.4.1.32473.1.2.1 NAME 'adLiteUser' AUXILIARY
	MAY ( memberOf $ sAMAccountName ) )
`

const conf = `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include {{D}}/ad-lite.schema
pidfile {{D}}/run/slapd.pid
argsfile {{D}}/run/slapd.args
modulepath /usr/lib/ldap
moduleload back_mdb
TLSCertificateFile {{D}}/tls/cert.pem
TLSCertificateKeyFile {{D}}/tls/key.pem
database mdb
maxsize 104857600
suffix "` + Suffix + `"
rootdn "` + AdminDN + `"
rootpw ` + AdminPW + `
directory {{D}}/db
access to attrs=userPassword by anonymous auth by * none
access to * by dn.exact="` + ReaderDN + `" read by * none
`

// BinaryEnv names the slapd executable to use instead of looking for one.
const BinaryEnv = "ACLC_SLAPD"

// Binary is the slapd executable, or "" when it is not installed.
func Binary() string {
	if p, ok := os.LookupEnv(BinaryEnv); ok {
		if _, err := os.Stat(p); err != nil {
			return ""
		}
		return p
	}
	for _, p := range []string{"/usr/sbin/slapd", "/usr/local/libexec/slapd", "/usr/libexec/slapd"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("slapd"); err == nil {
		return p
	}
	return ""
}

var (
	shared    *Server
	sharedErr error
	sharedMu  sync.Mutex
)

// Shared returns the package's slapd, starting it on first use; StopShared
// (from TestMain) stops it. It skips the test when slapd is not installed
// and RequireEnv is unset.
func Shared(t testing.TB) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		if os.Getenv(RequireEnv) == "" {
			t.Skip("slapd is not installed (make slapd installs it; set " + RequireEnv + "=1 to fail instead of skipping)")
		}
		t.Fatalf("slapd is not installed and %s is set: run make slapd", RequireEnv)
	}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = Start(bin)
	}
	if sharedErr != nil {
		t.Fatalf("start slapd: %v", sharedErr)
	}
	return shared
}

// StopShared stops the shared server, if it was started.
func StopShared() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		shared.Stop()
		shared = nil
	}
}

// Start runs slapd from bin in a new temporary directory and loads the
// directory's entries. The caller must Stop it.
func Start(bin string) (*Server, error) {
	dir, err := os.MkdirTemp("", "aclc-slapd-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir}
	for _, sub := range []string{"db", "run", "tls"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, err
		}
	}
	if err := writeCert(filepath.Join(dir, "tls")); err != nil {
		return nil, fmt.Errorf("certificate: %w", err)
	}
	s.CertFile = filepath.Join(dir, "tls", "cert.pem")
	if err := os.WriteFile(filepath.Join(dir, "ad-lite.schema"), []byte(schema), 0o600); err != nil {
		return nil, err
	}
	confPath := filepath.Join(dir, "slapd.conf")
	if err := os.WriteFile(confPath, []byte(strings.ReplaceAll(conf, "{{D}}", dir)), 0o600); err != nil {
		return nil, err
	}
	var lastErr error
	for range 3 { // a free port can be taken between the probe and slapd's bind
		if s.LDAPPort, s.LDAPSPort, err = freePorts(); err != nil {
			return nil, err
		}
		if lastErr = s.run(bin, confPath); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		os.RemoveAll(dir)
		return nil, lastErr
	}
	if err := s.load(); err != nil {
		s.Stop()
		return nil, fmt.Errorf("load entries: %w", err)
	}
	return s, nil
}

func (s *Server) run(bin, confPath string) error {
	logf, err := os.Create(filepath.Join(s.Dir, "slapd.log"))
	if err != nil {
		return err
	}
	urls := fmt.Sprintf("ldap://127.0.0.1:%d/ ldaps://127.0.0.1:%d/", s.LDAPPort, s.LDAPSPort)
	cmd := exec.Command(bin, "-d", "0", "-f", confPath, "-h", urls)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test binary
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	s.cmd, s.logf, s.exited = cmd, logf, make(chan struct{})
	go func() { _ = cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			logf.Close()
			out, _ := os.ReadFile(logf.Name())
			return fmt.Errorf("slapd exited at start: %s", strings.TrimSpace(string(out)))
		default:
		}
		if c, err := s.dialAdmin(); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.Stop()
	return fmt.Errorf("slapd did not answer on port %d within %s", s.LDAPPort, startTimeout)
}

// Stop kills slapd (SIGTERM, then SIGKILL after a bound) and removes its
// directory.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(stopTimeout):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
		s.cmd = nil
	}
	if s.logf != nil {
		s.logf.Close()
	}
	os.RemoveAll(s.Dir)
}

// Running reports whether slapd is still up.
func (s *Server) Running() bool {
	if s.exited == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

func (s *Server) dialAdmin() (*ldap.Conn, error) {
	c, err := ldap.DialURL(fmt.Sprintf("ldap://127.0.0.1:%d", s.LDAPPort), ldap.DialWithDialer(&net.Dialer{Timeout: time.Second}))
	if err != nil {
		return nil, err
	}
	c.SetTimeout(5 * time.Second)
	if err := c.Bind(AdminDN, AdminPW); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// load adds the base, the bind account and Users.
func (s *Server) load() error {
	c, err := s.dialAdmin()
	if err != nil {
		return err
	}
	defer c.Close()
	add := func(dn string, attrs map[string][]string) error {
		r := ldap.NewAddRequest(dn, nil)
		for k, v := range attrs {
			r.Attribute(k, v)
		}
		if err := c.Add(r); err != nil {
			return fmt.Errorf("add %s: %w", dn, err)
		}
		return nil
	}
	if err := add(Suffix, map[string][]string{"objectClass": {"dcObject", "organization"}, "dc": {"example"}, "o": {"Example"}}); err != nil {
		return err
	}
	for _, ou := range []string{"people", "system"} {
		if err := add("ou="+ou+","+Suffix, map[string][]string{"objectClass": {"organizationalUnit"}, "ou": {ou}}); err != nil {
			return err
		}
	}
	if err := add(ReaderDN, map[string][]string{"objectClass": {"organizationalRole", "simpleSecurityObject"}, "cn": {"reader"}, "userPassword": {ReaderPW}}); err != nil {
		return err
	}
	for u, groups := range Users {
		attrs := map[string][]string{"objectClass": {"inetOrgPerson", "adLiteUser"}, "uid": {u}, "cn": {u}, "sn": {u}, "sAMAccountName": {u}}
		if len(groups) > 0 {
			attrs["memberOf"] = groups
		}
		if err := add("uid="+u+","+PeopleDN, attrs); err != nil {
			return err
		}
	}
	return nil
}

// SetMemberOf replaces a user's memberOf values (none removes them).
func (s *Server) SetMemberOf(user string, values ...string) error {
	c, err := s.dialAdmin()
	if err != nil {
		return err
	}
	defer c.Close()
	m := ldap.NewModifyRequest("uid="+user+","+PeopleDN, nil)
	m.Replace("memberOf", values)
	return c.Modify(m)
}

// Secret returns the contents of a YuniKorn LDAP secret for this server,
// plain LDAP, as the placement specification's recipe writes it.
func (s *Server) Secret() map[string]string {
	return map[string]string{
		"Host": "127.0.0.1", "Port": strconv.Itoa(s.LDAPPort), "BaseDN": Suffix, "Filter": UserFilter,
		"GroupAttr": "memberOf", "ReturnAttr": "memberOf", "BindUser": ReaderDN, "BindPassword": ReaderPW,
		"SSL": "false", "Insecure": "false",
	}
}

// WriteSecret writes a secret directory in dir, one file per key, the way
// Kubernetes mounts a Secret: each key a symlink into a ..data directory.
// A key with the value "-" is left out.
func WriteSecret(dir string, kv map[string]string) error {
	data := filepath.Join(dir, "..2026_01_01_00_00_00.000000000")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return err
	}
	if err := os.Symlink(filepath.Base(data), filepath.Join(dir, "..data")); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	for k, v := range kv {
		if v == "-" {
			continue
		}
		if err := os.WriteFile(filepath.Join(data, k), []byte(v+"\n"), 0o600); err != nil {
			return err
		}
		if err := os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k)); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	return nil
}

// SecretDir writes this server's secret, with overrides, into a new
// directory under t.TempDir.
func (s *Server) SecretDir(t testing.TB, overrides map[string]string) string {
	t.Helper()
	kv := s.Secret()
	for k, v := range overrides {
		kv[k] = v
	}
	dir := t.TempDir()
	if err := WriteSecret(dir, kv); err != nil {
		t.Fatal(err)
	}
	return dir
}

func freePorts() (int, int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, l := range lns {
			l.Close()
		}
	}()
	for range 2 {
		var lc net.ListenConfig
		l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			return 0, 0, err
		}
		lns = append(lns, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports[0], ports[1], nil
}

// writeCert writes a self-signed certificate for localhost and 127.0.0.1.
func writeCert(dir string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "localhost"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), certPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "key.pem"), keyPEM, 0o600)
}
