// Package bundletest holds helpers for tests of signed OPA bundles: fresh
// key pairs on disk, and bundles changed after signing.
package bundletest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// WriteKeyPair writes a fresh private key (PKCS#8) and its public key
// (PKIX) as PEM files in a test directory, for alg RS256 or ES256.
func WriteKeyPair(t testing.TB, alg string) (priv, pub string) {
	t.Helper()
	var key crypto.Signer
	var err error
	switch alg {
	case "RS256":
		key, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ES256":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		t.Fatalf("no key for %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	priv, pub = filepath.Join(dir, "private.pem"), filepath.Join(dir, "public.pem")
	if err := os.WriteFile(priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

// Tamper rewrites one file of a .tar.gz bundle (file as the manifest names
// it, with or without the leading /), replacing the first old with new.
func Tamper(raw []byte, file, old, new string) ([]byte, error) {
	gz, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	found := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		if h.Name == file || "/"+h.Name == file {
			if !bytes.Contains(body, []byte(old)) {
				return nil, fmt.Errorf("%s does not contain %q", file, old)
			}
			body = bytes.Replace(body, []byte(old), []byte(new), 1)
			found = true
		}
		h.Size = int64(len(body))
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(body); err != nil {
			return nil, err
		}
	}
	if !found {
		return nil, fmt.Errorf("no %s in the bundle", file)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
