package main

import (
	"io"
	"strconv"

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

// count is n with its noun, singular for one: "1 warning", "2 warnings",
// "0 warnings". A noun whose plural is not its singular with an s gives
// both: count(n, "entry", "entries").
func count(n int, noun string, plural ...string) string {
	if n != 1 {
		if len(plural) > 0 {
			noun = plural[0]
		} else {
			noun += "s"
		}
	}
	return strconv.Itoa(n) + " " + noun
}
