//go:build tools

// Package tools pins YuniKorn 1.9.0's scheduler and admission controller, built
// from the Go module proxy for make yunikorn-e2e with go build of
// github.com/apache/yunikorn-k8shim/pkg/cmd/{shim,admissioncontroller}.
// Nothing else imports it.
package tools

import (
	_ "github.com/apache/yunikorn-k8shim/pkg/cmd/admissioncontroller"
	_ "github.com/apache/yunikorn-k8shim/pkg/cmd/shim"
)
