package main

import (
	"io"

	"github.com/aclc-dev/aclc/internal/text"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// writeOutput writes data to path, or to stdout for "-".
func writeOutput(path string, data []byte, stdout io.Writer) error {
	if path == "-" {
		_, err := stdout.Write(data)
		return err
	}
	return translate.WriteFileAtomic(path, data)
}

// count is n with its noun, singular for one (text.Count).
var count = text.Count
