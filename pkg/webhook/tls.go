package webhook

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"sync"
	"time"
)

// selfSignedValidity is how long SelfSigned's certificates are valid.
const selfSignedValidity = 365 * 24 * time.Hour

// SelfSigned makes a throw-away certificate authority and a serving
// certificate it signs, for local use and tests: ECDSA P-256 keys, valid
// for one year (from an hour ago, to tolerate clock skew). hosts become the
// serving certificate's subject alternative names: IP addresses as IP SANs,
// anything else as DNS names. It returns the serving certificate and the
// CA certificate in PEM, which is what a client (or a webhook
// configuration's caBundle) must trust.
func SelfSigned(hosts []string) (tls.Certificate, []byte, error) {
	if len(hosts) == 0 {
		return tls.Certificate{}, nil, errors.New("self-signed certificate: no hosts")
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("generate CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "aclc webhook CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(selfSignedValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("create CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("parse CA certificate: %w", err)
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("generate key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(selfSignedValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("create certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("parse certificate: %w", err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	return n
}

// certCheckInterval is how often certFiles looks at the files again;
// tests shorten it.
var certCheckInterval = 10 * time.Second

// certFiles serves a key pair from files and reloads it when either file's
// modification time or size changes. A failed reload keeps the previous
// pair, so a half-written rotation does not take the webhook down.
type certFiles struct {
	certFile, keyFile string
	log               *slog.Logger

	mu        sync.Mutex
	cert      *tls.Certificate
	stamp     [2]fileStamp
	checkedAt time.Time
}

type fileStamp struct {
	mod  time.Time
	size int64
}

func sameStamps(a, b [2]fileStamp) bool {
	for i := range a {
		if !a[i].mod.Equal(b[i].mod) || a[i].size != b[i].size {
			return false
		}
	}
	return true
}

func loadCertFiles(certFile, keyFile string, log *slog.Logger) (*certFiles, error) {
	c := &certFiles{certFile: certFile, keyFile: keyFile, log: log}
	if err := c.load(time.Now()); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *certFiles) stamps() ([2]fileStamp, error) {
	var s [2]fileStamp
	for i, f := range []string{c.certFile, c.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return s, err
		}
		s[i] = fileStamp{fi.ModTime(), fi.Size()}
	}
	return s, nil
}

// load reads the pair; the caller holds mu or owns c.
func (c *certFiles) load(now time.Time) error {
	st, err := c.stamps()
	if err != nil {
		return fmt.Errorf("load TLS key pair: %w", err)
	}
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("load TLS key pair: %w", err)
	}
	c.cert, c.stamp, c.checkedAt = &pair, st, now
	return nil
}

// getCertificate is tls.Config.GetCertificate.
func (c *certFiles) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if now.Sub(c.checkedAt) < certCheckInterval {
		return c.cert, nil
	}
	c.checkedAt = now
	if st, err := c.stamps(); err == nil && sameStamps(st, c.stamp) {
		return c.cert, nil
	}
	if err := c.load(now); err != nil {
		c.log.Error("webhook: keeping the previous TLS certificate", "error", err)
	} else {
		c.log.Info("webhook: TLS certificate reloaded", "cert", c.certFile)
	}
	return c.cert, nil
}
