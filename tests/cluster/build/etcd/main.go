// Command etcd is etcd's server, built from the Go module proxy for the
// cluster end-to-end test (make cluster-e2e). Nothing else imports it.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
