package yunikorn

import (
	"errors"

	"github.com/aclc-dev/aclc/pkg/acl/source"
)

// ErrInvalidConfig is matched by every error of Load, LoadFile and Validate,
// so that callers can tell bad input from other failures with errors.Is.
var ErrInvalidConfig = errors.New("invalid queue configuration")

type configKind struct{}

func (configKind) Sentinel() error { return ErrInvalidConfig }

// SourceError is an error located in a queue configuration file; it matches ErrInvalidConfig.
type SourceError = source.Error[configKind]

// SourceErrors is a list of located errors, in source order.
type SourceErrors = source.Errors[configKind]

// withFile sets File on every error that has none.
func withFile(err error, file string) error { return source.WithFile[configKind](err, file) }
