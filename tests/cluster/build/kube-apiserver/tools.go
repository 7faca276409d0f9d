//go:build tools

// Package tools pins kube-apiserver, built from the Go module proxy for the
// cluster end-to-end test (make cluster-e2e) with
// `go build k8s.io/kubernetes/cmd/kube-apiserver`. Nothing else imports it.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
