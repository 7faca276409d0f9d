package vov

import (
	"errors"

	"github.com/aclc-dev/aclc/pkg/acl/source"
)

// ErrInvalidSpec is matched by every error of Load and LoadFile that is
// about the content (the YAML source, its security.tcl, its resolver), so
// that callers can tell bad input from other failures with errors.Is.
var ErrInvalidSpec = errors.New("invalid VOV ACL source")

type specKind struct{}

func (specKind) Sentinel() error { return ErrInvalidSpec }

// SourceError is an error located in a VOV ACL source; it matches
// ErrInvalidSpec.
type SourceError = source.Error[specKind]

// SourceErrors is a list of located errors, in source order.
type SourceErrors = source.Errors[specKind]

// withFile sets File on every error that has none.
func withFile(err error, file string) error { return source.WithFile[specKind](err, file) }

// specError makes an error from another parser (security.tcl) match
// ErrInvalidSpec too, keeping its text and its own sentinel.
type specError struct{ err error }

func (e specError) Error() string   { return e.err.Error() }
func (e specError) Unwrap() []error { return []error{ErrInvalidSpec, e.err} }
