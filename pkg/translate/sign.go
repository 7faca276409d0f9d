package translate

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/aclc-dev/aclc/internal/inputfile"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
)

// DefaultKeyID is the key id a signature names when none is given; OPA's
// `opa run --verification-key-id` defaults to the same.
const DefaultKeyID = "default"

// ErrSigning is returned, wrapped, for a key, algorithm or claims file that
// cannot sign or verify a bundle.
var ErrSigning = errors.New("bundle signing")

// Signing says how a build signs its bundle: OPA's .signatures.json, a JWT
// over the hashes of every file, which `opa run --verification-key` and
// `aclc serve --verification-key` check before loading the bundle.
type Signing struct {
	KeyFile    string // PEM private key (RSA or EC), or the HMAC secret
	Algorithm  string // RS256, ES256, HS256, ...; "" infers it from the key
	KeyID      string // "" means DefaultKeyID
	ClaimsFile string // optional JSON object of extra claims
}

// SignBundle adds OPA's signature to b. It must be the last change made to
// the bundle: any later edit of a module, the data or the manifest
// invalidates it.
func SignBundle(b *bundle.Bundle, sg Signing) error {
	raw, err := os.ReadFile(sg.KeyFile)
	if err != nil {
		return fmt.Errorf("%w: signing key: %w", ErrSigning, err)
	}
	alg := sg.Algorithm
	if alg == "" {
		if alg, err = KeyAlgorithm(raw); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrSigning, sg.KeyFile, err)
		}
	}
	if sg.ClaimsFile != "" {
		if _, err := os.Stat(sg.ClaimsFile); err != nil {
			return fmt.Errorf("%w: claims file: %w", ErrSigning, err)
		}
	}
	keyID := sg.KeyID
	if keyID == "" {
		keyID = DefaultKeyID
	}
	// The key goes in as PEM text (or the secret), not as a path, so that a
	// secret that happens to name an existing file is never read instead.
	sc := bundle.NewSigningConfig(string(raw), alg, sg.ClaimsFile)
	if err := b.GenerateSignature(sc, keyID, false); err != nil {
		return fmt.Errorf("%w: %s (%s): %w", ErrSigning, sg.KeyFile, alg, err)
	}
	return nil
}

// Verification names the public key (or HMAC secret) a signed bundle must be
// signed with.
type Verification struct {
	KeyFile   string // PEM public key or certificate, or the HMAC secret
	Algorithm string // "" infers it from the key
	KeyID     string // "" means DefaultKeyID
	Scope     string // the scope claim the signature must carry, if any
}

// VerificationConfig reads the key and returns OPA's verification settings.
func (v Verification) VerificationConfig() (*bundle.VerificationConfig, error) {
	raw, err := os.ReadFile(v.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("%w: verification key: %w", ErrSigning, err)
	}
	alg := v.Algorithm
	if alg == "" {
		if alg, err = KeyAlgorithm(raw); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrSigning, v.KeyFile, err)
		}
	}
	id := v.KeyID
	if id == "" {
		id = DefaultKeyID
	}
	keys := map[string]*bundle.KeyConfig{id: {Key: string(raw), Algorithm: alg, Scope: v.Scope}}
	return bundle.NewVerificationConfig(keys, id, v.Scope, nil), nil
}

// KeyAlgorithm infers the JWT algorithm from a key: RS256 for RSA, ES256,
// ES384 or ES512 by the curve of an EC key, HS256 for anything that is not
// PEM (an HMAC secret). Public and private keys and certificates are read.
func KeyAlgorithm(raw []byte) (string, error) {
	block, _ := pem.Decode(raw)
	if block == nil {
		if len(raw) == 0 {
			return "", errors.New("empty key")
		}
		return "HS256", nil
	}
	var key any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "RSA PUBLIC KEY":
		key, err = x509.ParsePKCS1PublicKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "CERTIFICATE":
		var c *x509.Certificate
		if c, err = x509.ParseCertificate(block.Bytes); err == nil {
			key = c.PublicKey
		}
	default:
		return "", fmt.Errorf("unsupported PEM block %q (want a PUBLIC KEY, PRIVATE KEY, RSA or EC key, or CERTIFICATE)", block.Type)
	}
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", block.Type, err)
	}
	var curve elliptic.Curve
	switch k := key.(type) {
	case *rsa.PrivateKey, *rsa.PublicKey:
		return "RS256", nil
	case *ecdsa.PrivateKey:
		curve = k.Curve
	case *ecdsa.PublicKey:
		curve = k.Curve
	default:
		return "", fmt.Errorf("unsupported key type %T: give --signing-alg", key)
	}
	switch curve {
	case elliptic.P256():
		return "ES256", nil
	case elliptic.P384():
		return "ES384", nil
	case elliptic.P521():
		return "ES512", nil
	}
	return "", fmt.Errorf("unsupported curve %s", curve.Params().Name)
}

// ReadVerifiedBundle loads a bundle file or directory and checks its
// signature with vc: a bundle that is unsigned, signed with another key, or
// whose content no longer matches its signature is refused. With a nil vc
// only unsigned bundles load.
func ReadVerifiedBundle(path string, vc *bundle.VerificationConfig) (*bundle.Bundle, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		raw, err := ReadBundleFile(path)
		if err != nil {
			return nil, err
		}
		return ParseBundle(path, raw, vc)
	}
	return readBundle(path, bundle.NewDirectoryLoader(path), vc)
}

// ReadBundleFile reads a .tar.gz bundle file: a regular file (or a symlink
// to one) of at most MaxBundleSize bytes, which no bundle that inflates
// within the bound exceeds. A named pipe or a device is refused at once,
// naming the path and what it is, rather than waited on or read forever.
func ReadBundleFile(path string) ([]byte, error) {
	raw, err := inputfile.ReadFile(path, MaxBundleSize)
	if err != nil {
		return nil, fmt.Errorf("read bundle: %w", err)
	}
	return raw, nil
}

// ParseBundle reads a .tar.gz bundle from memory, checking its signature
// with vc as ReadVerifiedBundle does; name is used in messages.
func ParseBundle(name string, raw []byte, vc *bundle.VerificationConfig) (*bundle.Bundle, error) {
	if len(raw) > MaxBundleSize {
		return nil, fmt.Errorf("read bundle %s: %d bytes: larger than a bundle aclc reads (%s)", name, len(raw), inputfile.Size(MaxBundleSize))
	}
	if err := checkGzip(raw); err != nil {
		return nil, fmt.Errorf("read bundle %s: %w", name, err)
	}
	return readBundle(name, bundle.NewTarballLoaderWithBaseURL(bytes.NewReader(raw), name), vc)
}

// MaxBundleSize bounds what a bundle may inflate to, and so the file it is
// read from.
const MaxBundleSize = 1 << 30

// checkGzip reads a .tar.gz to its end before the bundle reader sees it:
// the tar reader stops at the archive's end and never reaches the gzip
// trailer, so a corrupted stream (an edited byte with its CRC left wrong)
// would load; and it bounds what the stream inflates to.
func checkGzip(raw []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("not a gzipped bundle: %w", err)
	}
	defer zr.Close()
	n, err := io.Copy(io.Discard, io.LimitReader(zr, MaxBundleSize+1))
	switch {
	case err != nil:
		return fmt.Errorf("corrupted bundle: %w", err)
	case n > MaxBundleSize:
		return fmt.Errorf("bundle inflates to more than %d MiB", MaxBundleSize>>20)
	}
	return nil
}

func readBundle(name string, loader bundle.DirectoryLoader, vc *bundle.VerificationConfig) (*bundle.Bundle, error) {
	b, err := bundle.NewCustomReader(loader).WithRegoVersion(ast.RegoV1).WithBundleVerificationConfig(vc).Read()
	if err != nil {
		return nil, fmt.Errorf("read bundle %s: %w", name, err)
	}
	return &b, nil
}

// ErrStaleRevision is returned, wrapped, for a signed bundle that may not
// replace the one in service because its revision is not newer.
var ErrStaleRevision = errors.New("bundle revision not newer than the one in service")

// revisionLayout is RFC 3339 in UTC with nanoseconds at a fixed width, so
// that revisions also sort as plain strings.
const revisionLayout = "2006-01-02T15:04:05.000000000Z07:00"

// BuildRevision is the manifest revision of a signed bundle built at t: the
// time in UTC to the nanosecond. A signature proves who built a bundle, not
// that it is the latest; an ordered revision, covered by the signature with
// the rest of the manifest, lets a server refuse an older one.
func BuildRevision(t time.Time) string { return t.UTC().Format(revisionLayout) }

// CheckRevision reports whether rev can be ordered: an RFC 3339 time, or a
// whole number (a build number, seconds since the epoch).
func CheckRevision(rev string) error {
	if revisionKind(rev) == unordered {
		return fmt.Errorf("revision %q cannot be ordered: want an RFC 3339 time (%s) or a whole number", rev, revisionLayout)
	}
	return nil
}

type revKind int

const (
	unordered revKind = iota
	timeRevision
	numberRevision
)

func revisionKind(rev string) revKind {
	if _, err := time.Parse(time.RFC3339Nano, rev); err == nil {
		return timeRevision
	}
	if _, err := strconv.ParseUint(rev, 10, 64); err == nil {
		return numberRevision
	}
	return unordered
}

// CheckNewer returns nil when a signed bundle of revision next may replace
// the one of revision served: both are times, or both whole numbers, and
// next is later; or served has no order at all (a bundle built before
// revisions were ordered), and next has one. Anything else, an equal
// revision included, is ErrStaleRevision: what cannot be shown newer is
// not let in.
func CheckNewer(served, next string) error {
	nk, sk := revisionKind(next), revisionKind(served)
	switch {
	case nk == unordered:
		return fmt.Errorf("%w: revision %q cannot be ordered (want an RFC 3339 time or a whole number: aclc build --signing-key gives the build time); in service: %q", ErrStaleRevision, next, served)
	case sk == unordered:
		return nil
	case nk != sk:
		return fmt.Errorf("%w: revision %q cannot be ordered against %q, the one in service (a time and a number)", ErrStaleRevision, next, served)
	}
	var order int
	if nk == timeRevision {
		n, _ := time.Parse(time.RFC3339Nano, next)
		s, _ := time.Parse(time.RFC3339Nano, served)
		order = n.Compare(s)
	} else {
		n, _ := strconv.ParseUint(next, 10, 64)
		s, _ := strconv.ParseUint(served, 10, 64)
		order = cmp.Compare(n, s)
	}
	switch {
	case order < 0:
		return fmt.Errorf("%w: revision %s is older than %s, the one in service", ErrStaleRevision, next, served)
	case order == 0:
		return fmt.Errorf("%w: revision %s is the one in service, with other content", ErrStaleRevision, next)
	}
	return nil
}
