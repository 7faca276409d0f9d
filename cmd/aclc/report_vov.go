package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// vovPrincipal is a --as value for a VOV source: user[@host][:osgroup,...].
type vovPrincipal struct {
	user, host string
	osgroups   []string // nil: resolved as the source says
}

func parseVOVPrincipal(s string) (vovPrincipal, error) {
	var p vovPrincipal
	who, groups, hasGroups := strings.Cut(s, ":")
	p.user, p.host, _ = strings.Cut(who, "@")
	if p.user == "" {
		return p, fmt.Errorf("--as %q: want user[@host][:osgroup,...]", s)
	}
	if hasGroups {
		p.osgroups = []string{}
		for _, g := range strings.Split(groups, ",") {
			if g != "" {
				p.osgroups = append(p.osgroups, g)
			}
		}
	}
	return p, nil
}

func (p vovPrincipal) String() string {
	s := p.user
	if p.host != "" {
		s += "@" + p.host
	}
	return s
}

// reportVOV prints every object's ACL as vovacl -show does and, for each
// --as principal, what the engine says they may do on each object.
func reportVOV(ctx context.Context, w *tabwriter.Writer, stderr io.Writer, spec *vov.Spec, as []string, engineName string, srcs []string, resolver string) int {
	fmt.Fprintf(w, "VOV project %s (owner %s, server host %s)\n", orNone(spec.Project), spec.Owner, orNone(spec.Host))
	for _, o := range spec.Objects {
		def := ""
		if o.DefaultACL {
			def = ", default ACL"
		}
		fmt.Fprintf(w, "%s %q (%sowner %s%s)\n", o.Type, o.Address(), otherKey(o), o.Owner, def)
		for i, e := range o.ACL {
			fmt.Fprintf(w, "  %s\n", vov.FormatEntry(i+1, e))
		}
	}
	fmt.Fprintln(w)
	if err := w.Flush(); err != nil || len(as) == 0 {
		return exitOK
	}
	var principals []vovPrincipal
	for _, a := range as {
		p, err := parseVOVPrincipal(a)
		if err != nil {
			errorf(stderr, "report: %v", err)
			return exitUsage
		}
		principals = append(principals, p)
	}
	eng, err := openEngine(ctx, engineName, "", srcs, "", resolver)
	if err != nil {
		errorf(stderr, "report: %v", err)
		return exitError
	}
	defer eng.Close(ctx)
	fmt.Fprintf(w, "who may do what, decided by the %s engine\nUSER\tROLE\tOBJECT\tCAPABILITIES\tWHY (VIEW)\n", eng.Name())
	for _, p := range principals {
		for _, o := range spec.Objects {
			d, err := decideVOV(ctx, eng, o.Address(), p)
			if err != nil {
				errorf(stderr, "report: %v", err)
				return exitError
			}
			caps := "nothing"
			if len(d.Capabilities) > 0 {
				caps = strings.Join(d.Capabilities, " ")
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", p, d.Role, o.Address(), caps, d.Reason)
		}
	}
	if err := w.Flush(); err != nil {
		return exitError
	}
	return exitOK
}

// otherKey names the object's second address, when it has one: a job's
// name, the id of any other object.
func otherKey(o *vov.Object) string {
	switch {
	case o.Type == vov.TypeJob && o.Name != "":
		return "name " + o.Name + ", "
	case o.Type != vov.TypeJob && o.ID != "":
		return "id " + o.ID + ", "
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func decideVOV(ctx context.Context, eng engine.Engine, object string, p vovPrincipal) (vov.Decision, error) {
	in := map[string]any{"object": object, "action": "VIEW", "user": p.user, "host": p.host}
	if p.osgroups != nil {
		in["osgroups"] = p.osgroups
	}
	raw, _ := json.Marshal(in)
	out, err := eng.Eval(ctx, translate.EntrypointVOV, raw)
	var d vov.Decision
	if err == nil {
		err = json.Unmarshal(out, &d)
	}
	return d, err
}
