// Command aclc compiles YuniKorn and VOV access rules into OPA bundles and
// evaluates them on every runtime.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
