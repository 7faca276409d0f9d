package main

import (
	"encoding/json"
	"io"

	"github.com/aclc-dev/aclc/builtins/opabuiltins"
)

const capabilitiesExamples = `  aclc capabilities > aclc-capabilities.json
  opa build --capabilities aclc-capabilities.json -b bundle/   # stock opa compiles policies that call aclc's builtins
`

func runCapabilities(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("capabilities", "aclc capabilities", capabilitiesExamples, stderr)
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return parseStatus(err)
	}
	if len(rest) != 0 {
		errorf(stderr, "capabilities: takes no arguments")
		return exitUsage
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(opabuiltins.Capabilities()); err != nil {
		errorf(stderr, "capabilities: %v", err)
		return exitError
	}
	return exitOK
}
