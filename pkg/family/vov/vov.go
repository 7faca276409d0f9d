// Package vov is the VOV source family: an aclc VOV ACL source, recognised
// by its top-level vov: key, compiled into data.aclc.vov.
package vov

import (
	"fmt"

	aclvov "github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/family"
)

// Family reads VOV ACL sources; a build takes at most one (one vovserver
// project).
type Family struct{}

// Kinds implements family.Family.
func (Family) Kinds() []string { return []string{"vov"} }

// Describe implements family.Family.
func (Family) Describe() string { return "a VOV ACL source (top-level vov: key)" }

// Claims implements family.Family: a file whose first document has a
// top-level vov: key, or broken YAML that reads like one.
func (Family) Claims(in family.Input) bool {
	return in.Dir == "" && aclvov.IsVOVSource(in.Data)
}

// Policies implements family.Family.
func (Family) Policies() []string { return []string{"vov"} }

// HostModules implements family.Family: groups resolved through
// aclc.user_groups.
func (Family) HostModules() []family.HostModule {
	return []family.HostModule{{Portable: "vov/groups_static.rego", Host: "vov/groups_host.rego", Use: family.ResolveGroups}}
}

// Compile implements family.Family.
func (Family) Compile(prev family.Compiled, in []family.Input) (family.Compiled, error) {
	c, _ := prev.(*Compiled)
	for _, i := range in {
		if i.Dir != "" {
			return nil, &aclvov.SourceError{Code: aclvov.CodeDirectory, File: i.Dir, Msg: "a directory is read as a mounted YuniKorn ConfigMap, not as a VOV source"}
		}
		if c != nil {
			return nil, &aclvov.SourceError{Code: aclvov.CodeSecondSource, File: i.Name, Msg: fmt.Sprintf("a second VOV ACL source (the first is %s); a build describes one project", c.Spec.File)}
		}
		spec, err := aclvov.Load(i.Name, i.Data)
		if err != nil {
			return nil, err
		}
		c = &Compiled{Spec: spec, file: i.Name}
	}
	return c, nil
}

// Compiled is a loaded VOV ACL source.
type Compiled struct {
	Spec *aclvov.Spec
	file string
}

// Files implements family.Compiled.
func (c *Compiled) Files() []string { return []string{c.file} }

// Data implements family.Compiled: data.aclc.vov, with the group
// resolution.
func (c *Compiled) Data(groups map[string]any) map[string]any {
	v := Data(c.Spec)
	for k, x := range groups {
		v[k] = x
	}
	return map[string]any{"vov": v}
}

// Policies implements family.Compiled.
func (c *Compiled) Policies() []string { return []string{"vov"} }

// Resolver implements family.Resolving: the source's resolver.
func (c *Compiled) Resolver() (family.ResolverChoice, bool) {
	return family.ResolverChoice{Spec: c.Spec.ResolverSpec}, true
}
