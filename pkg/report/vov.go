package report

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// vovPrincipal is a --as value for a VOV source: user[@host], with the
// --as-group values as OS groups.
type vovPrincipal struct {
	user, host string
	osgroups   []string // nil: resolved as the source says
}

// ParseVOVPrincipal reads p as a VOV user: user[@host], its groups OS groups.
func ParseVOVPrincipal(p Principal) (vovPrincipal, error) {
	var v vovPrincipal
	v.user, v.host, _ = strings.Cut(p.User, "@")
	if v.user == "" {
		return v, fmt.Errorf("--as %q: want user[@host]", p.User)
	}
	if len(p.Groups) > 0 {
		v.osgroups = p.Groups
	}
	return v, nil
}

func (p vovPrincipal) String() string {
	s := p.user
	if p.host != "" {
		s += "@" + p.host
	}
	return s
}

// VOVReport is what report says about a VOV source.
type VOVReport struct {
	Project   string        `json:"project"`
	Owner     string        `json:"owner"`
	Host      string        `json:"host"`
	Objects   []vovObject   `json:"objects"`
	Engine    string        `json:"engine,omitempty"`
	Decisions []vovDecision `json:"decisions,omitempty"`
}

type vovObject struct {
	Type       string   `json:"type"`
	Address    string   `json:"address"`
	Other      string   `json:"other,omitempty"`
	Owner      string   `json:"owner"`
	DefaultACL bool     `json:"defaultACL"`
	ACL        []string `json:"acl"`
}

type vovDecision struct {
	User     string   `json:"user"`
	Host     string   `json:"host,omitempty"`
	OSGroups []string `json:"osgroups"` // null: resolved
	Object   string   `json:"object"`
	vov.Decision
}

// VOV lists every object's ACL as vovacl -show does and, for each
// --as user, what the engine says they may do on each object.
func VOV(ctx context.Context, eng engine.Engine, spec *vov.Spec, as []Principal) (*VOVReport, error) {
	r := &VOVReport{Project: spec.Project, Owner: spec.Owner, Host: spec.Host}
	for _, o := range spec.Objects {
		ob := vovObject{Type: string(o.Type), Address: o.Address(), Other: o.OtherAddress(), Owner: o.Owner, DefaultACL: o.DefaultACL, ACL: []string{}}
		for i, e := range o.ACL {
			ob.ACL = append(ob.ACL, vov.FormatEntry(i+1, e))
		}
		r.Objects = append(r.Objects, ob)
	}
	if len(as) == 0 {
		return r, nil
	}
	var principals []vovPrincipal
	for _, a := range as {
		p, err := ParseVOVPrincipal(a)
		if err != nil {
			return nil, err
		}
		principals = append(principals, p)
	}
	r.Engine = eng.Name()
	for _, p := range principals {
		for _, o := range spec.Objects {
			d, err := decideVOV(ctx, eng, o.Address(), p)
			if err != nil {
				return nil, err
			}
			r.Decisions = append(r.Decisions, vovDecision{User: p.user, Host: p.host, OSGroups: p.osgroups, Object: o.Address(), Decision: d})
		}
	}
	return r, nil
}

func (r *VOVReport) Tables(wide bool) []*Table {
	// The ACLs as vovacl -show prints them, under each object.
	head := &Table{Title: fmt.Sprintf("VOV project %s (owner %s, server host %s)", OrNone(r.Project), r.Owner, OrNone(r.Host))}
	for _, o := range r.Objects {
		other, def := "", ""
		if o.Other != "" {
			other = o.Other + ", "
		}
		if o.DefaultACL {
			def = ", default ACL"
		}
		head.Lines = append(head.Lines, fmt.Sprintf("%s %q (%sowner %s%s)", o.Type, o.Address, other, o.Owner, def))
		for _, e := range o.ACL {
			head.Lines = append(head.Lines, "  "+e)
		}
	}
	out := []*Table{head}
	if len(r.Decisions) > 0 {
		t := &Table{Title: "who may do what, decided by the " + r.Engine + " engine", Header: []string{"USER", "ROLE", "OBJECT", "CAPABILITIES", "WHY (VIEW)"}, Wrap: []bool{false, false, false, true, true}}
		if wide {
			t.Header = append(t.Header, "OS GROUPS")
			t.Wrap = append(t.Wrap, true)
		}
		for _, d := range r.Decisions {
			caps := "nothing"
			if len(d.Capabilities) > 0 {
				caps = strings.Join(d.Capabilities, " ")
			}
			who := vovPrincipal{user: d.User, host: d.Host}.String()
			cells := []string{who, d.Role, d.Object, caps, d.Reason}
			if wide {
				cells = append(cells, groupsShown(d.OSGroups))
			}
			t.Add(cells...)
		}
		out = append(out, t)
	}
	return out
}

// OrNone is s, or "(none)" for nothing.
func OrNone(s string) string {
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
