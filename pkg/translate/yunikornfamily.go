package translate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc-dev/aclc/builtins"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/layout"
	"github.com/aclc-dev/aclc/pkg/acl/source"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/family"
)

// yunikornFamily is YuniKorn's configuration: its ConfigMaps (or a bare
// queues.yaml, or a plain map of keys), the Namespaces whose annotations
// placement reads, and the admission controller's settings they hold. It
// lives here, not in a package of its own, because the Gatekeeper writer
// and aclc's commands read its queue tree and settings by their types.
type yunikornFamily struct {
	// rel is the YuniKorn release the configuration is read, validated
	// and decided as.
	rel release.Version
}

func (yunikornFamily) Kinds() []string {
	return []string{string(KindYuniKornQueues), string(KindYuniKornAdmission)}
}

func (yunikornFamily) Describe() string { return "a YuniKorn configuration" }

// Claims takes directories, read as mounted ConfigMaps; as the default
// family it also reads every file no other family claims.
func (yunikornFamily) Claims(in family.Input) bool { return in.Dir != "" }

// Policies are the queue and placement decisions' directory and the
// admission decisions'.
func (yunikornFamily) Policies() []string { return []string{"yunikorn", "admission"} }

// HostModules implements family.Family: groups resolved through
// aclc.user_groups, and admission objects decoded by aclc's decoding
// builtins.
func (yunikornFamily) HostModules() []family.HostModule {
	return []family.HostModule{
		{Portable: "yunikorn/groups_static.rego", Host: "yunikorn/groups_host.rego", Use: family.ResolveGroups},
		{Portable: "admission/decode_static.rego", Host: "admission/decode_host.rego", Use: family.DecodeAdmission},
	}
}

// HostBuiltins implements family.Hosting: the admission decoding and
// pattern matching its host modules call.
func (yunikornFamily) HostBuiltins() []builtins.Builtin { return admission.Builtins() }

func (f yunikornFamily) Compile(prev family.Compiled, in []family.Input) (family.Compiled, error) {
	var files []*layout.File
	for _, i := range in {
		var f *layout.File
		var err error
		if i.Dir != "" {
			f, err = layout.ReadDir(i.Dir)
		} else {
			f, err = layout.Read(i.Name, i.Data)
		}
		if err != nil {
			return nil, sourceError{err: err}
		}
		files = append(files, f)
	}
	p, _ := prev.(*yunikornCompiled)
	return settleYuniKorn(p, files, f.rel)
}

// yunikornCompiled is the configuration YuniKorn runs from every file of
// ConfigMaps or Namespaces given so far.
type yunikornCompiled struct {
	files         []*layout.File
	layout        *layout.Config
	conf          *yunikorn.SchedulerConfig
	tree          *yunikorn.QueueTree
	admission     *admission.Settings
	admissionFile string
	diags         []source.Diagnostic
	namespaces    map[string]any
}

// settleYuniKorn adds files of YuniKorn ConfigMaps or Namespaces to those
// of prev (nil: none), then settles the configuration of them all.
func settleYuniKorn(prev *yunikornCompiled, added []*layout.File, rel release.Version) (*yunikornCompiled, error) {
	var files []*layout.File
	if prev != nil {
		files = slices.Clip(prev.files)
	}
	files = append(files, added...)
	var cms []*layout.ConfigMap
	var diags []source.Diagnostic
	namespaces := map[string]any{}
	nsFile := map[string]string{}
	for _, file := range files {
		cms = append(cms, file.ConfigMaps...)
		diags = append(diags, file.Diagnostics...)
		for _, ns := range file.Namespaces {
			if prev, dup := nsFile[ns.Name]; dup {
				return nil, sourceError{err: &layout.Error{Code: layout.CodeNamespaceTwice, File: ns.File, Line: ns.Line, Column: ns.Column, Value: ns.Name, Msg: fmt.Sprintf("namespace %s is given twice (first in %s)", ns.Name, prev)}}
			}
			nsFile[ns.Name] = fmt.Sprintf("%s:%d", ns.File, ns.Line)
			namespaces[ns.Name] = namespaceObject(ns)
		}
	}
	c := &yunikornCompiled{files: files, namespaces: namespaces}
	if len(cms) > 0 {
		var err error
		if c.layout, err = layout.Flatten(cms); err != nil {
			return nil, sourceError{err: err, consequence: ConsequenceLayout}
		}
		diags = append(diags, c.layout.Diagnostics...)
		if err := yunikorn.CheckSettings(c.layout); err != nil {
			return nil, sourceError{err: err, consequence: ConsequenceSettings}
		}
		if c.conf, err = yunikorn.FromLayoutAs(c.layout, rel); err != nil {
			return nil, sourceError{err: err, consequence: ConsequenceValidator}
		}
		if c.tree, err = yunikorn.BuildTree(c.conf.Source, c.conf); err != nil {
			return nil, sourceError{err: err, consequence: ConsequenceBuild}
		}
		diags = append(diags, configDiagnostics(c.layout, c.conf)...)
		if v, ok := c.layout.Get(ClusterIDKey); ok && v.Text != "" {
			c.tree.ClusterID = v.Text
		}
		c.admission = admission.FromLayout(c.layout).WithRelease(rel)
		var names []string
		for _, cm := range c.layout.ConfigMaps {
			names = append(names, cm.File)
		}
		c.admissionFile = strings.Join(slices.Compact(names), ", ")
	}
	c.diags = diags
	return c, nil
}

func (c *yunikornCompiled) Files() []string {
	var out []string
	for _, f := range c.files {
		out = append(out, f.Name)
	}
	return out
}

// Data is data.aclc.yunikorn with the group resolution, the admission
// settings, and the scheduler settings the queue review reads.
func (c *yunikornCompiled) Data(groups map[string]any) map[string]any {
	out := map[string]any{}
	if c.tree != nil {
		yk := YuniKornData(c.tree)
		for k, v := range groups {
			yk[k] = v
		}
		out["yunikorn"] = yk
	}
	if c.admission != nil {
		out["admission"] = AdmissionData(c.admission)
		if c.tree != nil {
			out["admission_queue"] = admissionQueueData(c.layout)
		}
	}
	return out
}

func (c *yunikornCompiled) Policies() []string {
	var out []string
	if c.tree != nil {
		out = append(out, "yunikorn")
	}
	if c.admission != nil {
		out = append(out, "admission")
	}
	return out
}

// queueReviewFlags are the two scheduler settings the pod → application
// rules read: admissionController.filtering.generateUniqueAppId and
// service.disableGangScheduling, false when absent. CheckSettings has
// refused a value strconv.ParseBool does not accept.
func queueReviewFlags(c *layout.Config) (uniqueAppID, disableGangScheduling bool) {
	flag := func(key string) bool {
		if c == nil {
			return false
		}
		v, ok := c.Get(key)
		if !ok {
			return false
		}
		b, _ := strconv.ParseBool(v.Text)
		return b
	}
	return flag(admission.KeyGenerateUniqueAppID), flag(admission.KeyDisableGangScheduling)
}

// Resolver implements family.Resolving: the first partition's
// usergroupresolver.type, as YuniKorn's scheduler reads it; none for a
// configuration without partitions. Without a queue configuration the
// sources choose nothing.
func (c *yunikornCompiled) Resolver() (family.ResolverChoice, bool) {
	if c.tree == nil {
		return family.ResolverChoice{}, false
	}
	if len(c.tree.Partitions) == 0 {
		return family.ResolverChoice{Spec: builtins.ResolverNone}, true
	}
	choice := family.ResolverChoice{Spec: builtins.ResolverForConfigType(c.tree.Resolver)}
	if choice.Spec == builtins.ResolverLDAP {
		choice.Hint = fmt.Sprintf("the queue configuration selects usergroupresolver type ldap, whose secret YuniKorn reads from %s: pass --resolver ldap=DIR to read it from DIR", builtins.LDAPSecretsDir)
	}
	return choice, true
}
