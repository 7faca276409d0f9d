//go:build tools

// Package tools pins kube-controller-manager, built from the Go module proxy
// for the YuniKorn live test (make yunikorn-e2e) with
// `go build k8s.io/kubernetes/cmd/kube-controller-manager`: its controllers
// make the pods of the corpus's workloads. Nothing else imports it.
package tools

import _ "k8s.io/kubernetes/cmd/kube-controller-manager"
