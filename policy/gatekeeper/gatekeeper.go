// Package gatekeeper embeds the Gatekeeper forms of the modules through which
// aclc's decisions read their configuration. Gatekeeper lets a template's
// libraries read only data.lib and data.inventory, so these forms take the
// configuration from the libraries' input, which the template's entry module
// builds from the Constraint's parameters. Each module here has a twin of the
// same name in policy/rego, the bundle form.
package gatekeeper

import (
	"embed"

	policy "github.com/aclc-dev/aclc/policy/rego"
)

//go:embed all:yunikorn all:admission
var files embed.FS

// Modules returns the modules keyed by their path in this directory, e.g.
// "yunikorn/config.rego", the key of their bundle form in policy.Modules.
func Modules() map[string]string { return policy.Collect(files, false) }
