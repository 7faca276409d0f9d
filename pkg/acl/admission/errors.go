package admission

import (
	srcerr "github.com/aclc-dev/aclc/pkg/acl/source"
)

type settingsKind struct{}

func (settingsKind) Sentinel() error { return ErrInvalidSettings }

// SourceError is an error located in a settings file; it matches ErrInvalidSettings.
type SourceError = srcerr.Error[settingsKind]

// SourceErrors is a list of located errors, in source order.
type SourceErrors = srcerr.Errors[settingsKind]

// withFile sets File on every error that has none.
func withFile(err error, file string) error { return srcerr.WithFile[settingsKind](err, file) }
