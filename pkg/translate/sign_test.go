package translate

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/bundle"
)

// TestKeyAlgorithm pins the algorithm inferred from a key when
// --signing-alg is not given: OPA's JWT algorithm for each key type.
func TestKeyAlgorithm(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ec := func(c elliptic.Curve) *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(c, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	pkcs8 := func(k any) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	pkix := func(k any) []byte {
		der, err := x509.MarshalPKIXPublicKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	p384 := ec(elliptic.P384())
	ecDER, err := x509.MarshalECPrivateKey(p384)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		raw  []byte
		want string
	}{
		{"an RSA private key signs RS256", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8(rsaKey)}), "RS256"},
		{"a PKCS#1 RSA key signs RS256", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}), "RS256"},
		{"an RSA public key verifies RS256", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix(&rsaKey.PublicKey)}), "RS256"},
		{"a P-256 key signs ES256", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8(ec(elliptic.P256()))}), "ES256"},
		{"a P-384 SEC 1 key signs ES384", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), "ES384"},
		{"a P-384 public key verifies ES384", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pkix(&p384.PublicKey)}), "ES384"},
		{"a P-521 key signs ES512", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8(ec(elliptic.P521()))}), "ES512"},
		{"anything not PEM is an HMAC secret", []byte("s3cret\n"), "HS256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := KeyAlgorithm(tt.raw)
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	for name, raw := range map[string][]byte{
		"an empty key":        nil,
		"an unknown PEM type": pem.EncodeToMemory(&pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: []byte{1}}),
		"a corrupt key":       pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1, 2, 3}}),
	} {
		if _, err := KeyAlgorithm(raw); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestSignedBundleRoundTrip: an HMAC-signed bundle reads back with the
// same secret, and is refused with another secret, unsigned, or when the
// verification key is missing.
func TestSignedBundleRoundTrip(t *testing.T) {
	s := &Sources{}
	if err := s.Add("q.yaml", []byte("partitions:\n  - name: default\n    queues:\n      - name: root\n        submitacl: \"*\"\n"), KindAuto); err != nil {
		t.Fatal(err)
	}
	b, err := RegoBundle(s)
	if err != nil {
		t.Fatal(err)
	}
	unsigned, err := BundleBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	secret, other := filepath.Join(dir, "secret"), filepath.Join(dir, "other")
	os.WriteFile(secret, []byte("correct horse"), 0o600)
	os.WriteFile(other, []byte("battery staple"), 0o600)
	if err := SignBundle(b, Signing{KeyFile: secret}); err != nil {
		t.Fatal(err)
	}
	signed, err := BundleBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	vc := func(key string) Verification { return Verification{KeyFile: key} }
	good, err := vc(secret).VerificationConfig()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseBundle("signed", signed, good); err != nil {
		t.Errorf("signed bundle refused: %v", err)
	}
	bad, _ := vc(other).VerificationConfig()
	for _, r := range []struct {
		name string
		raw  []byte
		vc   *bundle.VerificationConfig
		want string
	}{
		{"another secret", signed, bad, "failed to verify"},
		{"an unsigned bundle", unsigned, good, "missing .signatures.json"},
		{"a signed bundle without a key", signed, nil, "verification key not provided"},
	} {
		if _, err := ParseBundle("b", r.raw, r.vc); err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: %v; want %q", r.name, err, r.want)
		}
	}
	if err := SignBundle(b, Signing{KeyFile: filepath.Join(dir, "none")}); err == nil {
		t.Error("signing with a missing key file succeeded")
	}
}
