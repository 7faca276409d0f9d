// Package vov is the VOV source family: an aclc VOV ACL source, recognised
// by its top-level vov: key, and the vovacl scripts applied to it,
// recognised by their vovacl commands, compiled into data.aclc.vov.
package vov

import (
	"fmt"
	"slices"

	aclvov "github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/family"
)

// Family reads VOV ACL sources and vovacl scripts; a build takes at most
// one source (one vovserver project), and any number of scripts, applied
// to it in the order given.
type Family struct{}

// Kinds implements family.Family.
func (Family) Kinds() []string { return []string{"vov"} }

// Describe implements family.Family.
func (Family) Describe() string {
	return "a VOV ACL source (top-level vov: key) or a vovacl script (lines of vovacl commands)"
}

// Claims implements family.Family: a file whose first document has a
// top-level vov: key, or broken YAML that reads like one; or a file whose
// first command is vovacl.
func (Family) Claims(in family.Input) bool {
	return in.Dir == "" && (aclvov.IsVOVSource(in.Data) || aclvov.IsScript(in.Data))
}

// Policies implements family.Family.
func (Family) Policies() []string { return []string{"vov"} }

// HostModules implements family.Family: groups resolved through
// aclc.user_groups.
func (Family) HostModules() []family.HostModule {
	return []family.HostModule{{Portable: "vov/groups_static.rego", Host: "vov/groups_host.rego", Use: family.ResolveGroups}}
}

// Compile implements family.Family. The YAML source is loaded first,
// wherever it stands among the inputs; the scripts are then applied to it
// in the order given, as one vovacl after another.
func (Family) Compile(prev family.Compiled, in []family.Input) (family.Compiled, error) {
	c, _ := prev.(*Compiled)
	var scripts []family.Input
	for _, i := range in {
		if i.Dir != "" {
			return nil, &aclvov.SourceError{Code: aclvov.CodeDirectory, File: i.Dir, Msg: "a directory is read as a mounted YuniKorn ConfigMap, not as a VOV source"}
		}
		if aclvov.IsScript(i.Data) && !aclvov.IsVOVSource(i.Data) {
			scripts = append(scripts, i)
			continue
		}
		if c != nil {
			return nil, &aclvov.SourceError{Code: aclvov.CodeSecondSource, File: i.Name, Msg: fmt.Sprintf("a second VOV ACL source (the first is %s); a build describes one project", c.file)}
		}
		spec, err := aclvov.Load(i.Name, i.Data)
		if err != nil {
			return nil, err
		}
		c = &Compiled{Spec: spec, file: i.Name}
	}
	for _, i := range scripts {
		if c == nil {
			return nil, &aclvov.ScriptError{Code: aclvov.CodeScriptNoSource, File: i.Name,
				Msg: "a vovacl script edits the objects of a VOV ACL source: give the source that declares them beside it, as in aclc check acls.yaml setup.vovacl"}
		}
		sc, err := aclvov.ParseScript(i.Name, i.Data)
		if err != nil {
			return nil, err
		}
		spec, err := aclvov.ApplyScript(c.Spec, sc)
		if err != nil {
			return nil, err
		}
		c = &Compiled{Spec: spec, file: c.file, scripts: append(slices.Clip(c.scripts), i.Name)}
	}
	return c, nil
}

// Compiled is a loaded VOV ACL source with its scripts applied.
type Compiled struct {
	// Spec is the source with every script applied.
	Spec    *aclvov.Spec
	file    string
	scripts []string
}

// Files implements family.Compiled: the source, then its scripts.
func (c *Compiled) Files() []string { return append([]string{c.file}, c.scripts...) }

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
