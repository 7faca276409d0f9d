package main

import (
	"github.com/aclc-dev/aclc/internal/text"
	"github.com/aclc-dev/aclc/pkg/target"
)

// writeOutput writes data to path, or to stdout for "-".
var writeOutput = target.WriteFile

// count is n with its noun, singular for one (text.Count).
var count = text.Count
