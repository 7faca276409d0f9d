// Package gatekeeper embeds the Gatekeeper forms of the modules through which
// aclc's decisions read their configuration. Gatekeeper lets a template's
// libraries read only data.lib and data.inventory, so these forms take the
// configuration from the libraries' input, which the template's entry module
// builds from the Constraint's parameters. Each module here has a twin of the
// same name in policy/rego, the bundle form. The templates' entry modules
// live here too (Template).
package gatekeeper

import (
	"embed"
	"io/fs"

	policy "github.com/aclc-dev/aclc/policy/rego"
)

//go:embed all:yunikorn all:admission
var files embed.FS

//go:embed templates/*.rego
var templates embed.FS

// Modules returns the modules keyed by their path in this directory, e.g.
// "yunikorn/config.rego", the key of their bundle form in policy.Modules.
func Modules() map[string]string { return policy.Collect(files, false) }

// Template returns the entry module of the ConstraintTemplate named name
// (yunikornuserinfo, yunikornqueue). Its rules whose values are {} with a
// comment saying the build sets them are constants the build fills in.
func Template(name string) (string, error) {
	b, err := fs.ReadFile(templates, "templates/"+name+".rego")
	return string(b), err
}
