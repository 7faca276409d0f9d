package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/aclc-dev/aclc/pkg/acl/vov"
)

const vovaclSynopsis = `aclc vovacl --spec FILE [-agent AGENT] [-actions "CAPS"] (-append|-set|-delete|-show|-reset)
              [--as USER [--host HOST] [--osgroups G1,G2]] OBJECT`

const vovaclExamples = `  # VOV's own examples, on a source file:
  aclc vovacl --spec acls.yaml -agent ADMIN -append -actions "VIEW RETRACE STOP FORGET" MySetName
  aclc vovacl --spec acls.yaml -agent "USER cadmgr" -append -actions STOP /system/processcontrol
  aclc vovacl --spec acls.yaml -agent "USERGROUP designers" -append -actions STOP,FORGET DesignSet
  aclc vovacl --spec acls.yaml -agent "OSGROUP designers" -append -actions STOP 00123456
  aclc vovacl --spec acls.yaml -reset 00123456
  # lock a job against LEADERs taking it over; the agent in two words:
  aclc vovacl --spec acls.yaml -delete -agent LEADER -actions CHOWN 00123456
  aclc vovacl --spec acls.yaml -agent USER john -set -actions VIEW,EDIT DesignSet
  # show the ACL as VOV prints it; as joe from pluto, which needs VIEW:
  aclc vovacl --spec acls.yaml -show --as joe --host pluto DesignSet
  # a file (a place) by its path or its vovId; the object owner's USER entry:
  aclc vovacl --spec acls.yaml -agent USER -append -actions "EDIT VIEW" /proj/rtl/top.v

OBJECT is a set's, FairShare group's, resource map's or reservation's name, a file's
path, or any object's vovId.

Agents: USER name (a login), USER (the object's owner), USERGROUP name, FSGROUP name,
OSGROUP name, HOST name, OWNER (the project owner), ADMIN, LEADER, EVERYBODY, SERVER,
UNDEF; "KIND name" as one argument or KIND name as two. A bare USER needs an option
after it (-agent USER -append ...), or it takes the next word as its name. SERVER and
UNDEF entries are kept but never match.
Capabilities (-actions, space- or comma-separated, may repeat): ATTACH CHOWN CREATE
DELEGATE DETACH EDIT EXISTS FORGET RESUME RETRACE SIGNAL STOP SUSPEND VIEW, or ALL.

-append adds the capabilities to the agent's entry (a new entry goes last); -set
replaces them; -delete removes them, or the whole entry without -actions; -reset
writes the default ACL (OWNER ATTACH DETACH EDIT VIEW FORGET DELEGATE EXISTS,
EVERYBODY ATTACH VIEW). An object without acl: has that default, and an edit
writes it out first. Only the edited ACL's text changes; comments stay.

Without --as, whoever can write FILE is trusted: the edit is made without an ACL
check, as the file's editor could make it by hand. With --as, the change is made
only if USER (from HOST, in OS groups G1,G2) holds DELEGATE on the object, and
-show only if USER holds VIEW, as vov/acl/decision decides; otherwise exit 1 and
nothing is written.
`

// namedAgentKind reports whether word is an agent kind that takes a name,
// for the two-argument form of -agent.
func namedAgentKind(word string) bool {
	k := vov.AgentKind(strings.ToUpper(word))
	return k.Valid() && k.Named()
}

// joinAgentArgs rewrites "-agent KIND name" (two arguments, as VOV's usage
// also allows) into one "-agent=KIND name" argument, so that the flag
// package sees the name as part of the agent.
func joinAgentArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		var value string
		switch {
		case (a == "-agent" || a == "--agent") && i+1 < len(args):
			value = args[i+1]
			i++
		case strings.HasPrefix(a, "-agent=") || strings.HasPrefix(a, "--agent="):
			_, value, _ = strings.Cut(a, "=")
		default:
			out = append(out, a)
			continue
		}
		if !strings.ContainsAny(strings.TrimSpace(value), " \t") && namedAgentKind(strings.TrimSpace(value)) &&
			i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			value += " " + args[i+1]
			i++
		}
		out = append(out, "-agent="+value)
	}
	return out
}

// listFlag collects a flag that may repeat.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runVovacl(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("vovacl", vovaclSynopsis, vovaclExamples, stderr)
	spec := fs.String("spec", "", "the VOV ACL source `FILE` to show or edit (required)")
	agentArg := fs.String("agent", "", "the `AGENT` of the entry: \"USER name\", OWNER, ... (or KIND name as two arguments)")
	var actions listFlag
	fs.Var(&actions, "actions", "the `CAPS` of the entry, space- or comma-separated; may repeat")
	ops := map[string]*bool{}
	for _, op := range []struct{ name, usage string }{
		{"append", "add the capabilities to the agent's entry"},
		{"set", "replace the agent's capabilities"},
		{"delete", "remove the capabilities from the agent's entry, or the entry without -actions"},
		{"show", "print the object's ACL as vovacl -show does"},
		{"reset", "write the default ACL"},
	} {
		ops[op.name] = fs.Bool(op.name, false, op.usage)
	}
	as := fs.String("as", "", "check the change as `USER`: DELEGATE is needed to edit, VIEW to show")
	host := fs.String("host", "", "with --as: the `HOST` the user connects from")
	osgroups := fs.String("osgroups", "", "with --as: the user's OS groups `G1,G2`, comma-separated (default: resolved by the source's resolver)")
	pos, err := parseInterleaved(fs, joinAgentArgs(args))
	if err != nil {
		return parseStatus(err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	usageErr := func(format string, a ...any) int {
		errorf(stderr, "vovacl: "+format, a...)
		fmt.Fprintf(stderr, "Run 'aclc vovacl -h' for usage.\n")
		return exitUsage
	}

	var op string
	for _, name := range []string{"append", "set", "delete", "show", "reset"} {
		if *ops[name] {
			if op != "" {
				return usageErr("give one operation, not -%s and -%s", op, name)
			}
			op = name
		}
	}
	switch {
	case op == "":
		return usageErr("give one operation: -append, -set, -delete, -show or -reset")
	case *spec == "":
		return usageErr("--spec FILE is required")
	case len(pos) == 0:
		return usageErr("no OBJECT given")
	case len(pos) > 1:
		return usageErr("one OBJECT, got %d: %s", len(pos), strings.Join(pos, " "))
	case *as == "" && (set["host"] || set["osgroups"]):
		return usageErr("--host and --osgroups go with --as")
	}
	object := pos[0]

	var edit vov.Edit
	switch op {
	case "show", "reset":
		if set["agent"] || len(actions) > 0 {
			return usageErr("-%s takes no -agent and no -actions", op)
		}
		edit.Op = vov.OpReset // unused by -show
	default:
		if !set["agent"] {
			return usageErr("-%s needs -agent", op)
		}
		a, err := vov.ParseAgent(*agentArg)
		if err != nil {
			return usageErr("-agent %q: %v", *agentArg, strings.TrimPrefix(err.Error(), vov.ErrInvalidAgent.Error()+": "))
		}
		caps, named, err := vov.ParseCapabilityWords(vov.SplitCapabilities(strings.Join(actions, " ")))
		if err != nil {
			return usageErr("-actions: %v", err)
		}
		switch {
		case len(caps) == 0 && len(actions) > 0:
			// An empty -actions on -delete would remove the whole entry.
			return usageErr("-actions names no capability")
		case len(caps) == 0 && op != "delete":
			return usageErr("-%s needs -actions", op)
		}
		edit = vov.Edit{Op: vov.EditOp(op), Agent: a, Capabilities: caps, Named: named}
	}

	doc, err := vov.OpenDocument(*spec)
	if err != nil {
		errorf(stderr, "vovacl: %v", err)
		return exitError
	}
	o, err := doc.Object(object)
	if err != nil {
		errorf(stderr, "vovacl: %v", err)
		return exitError
	}
	if *as != "" {
		need := vov.CapDelegate
		if op == "show" {
			need = vov.CapView
		}
		in := vov.Input{Object: object, Action: string(need), User: *as, Host: *host}
		if set["osgroups"] {
			in.OSGroups = splitList(*osgroups)
		}
		if d := doc.Spec.Decide(in); !d.Allow {
			errorf(stderr, "vovacl: %s may not %s the ACL of %s %q: %s needed (%s)",
				*as, map[bool]string{true: "see", false: "change"}[op == "show"], o.Type, o.Address(), need, d.Reason)
			return exitError
		}
	}
	if op == "show" {
		fmt.Fprint(stdout, vov.FormatACL(o.ACL))
		return exitOK
	}
	res, err := doc.Apply(object, edit)
	if err != nil {
		errorf(stderr, "vovacl: %v; %s not changed", err, *spec)
		return exitError
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(stderr, w)
	}
	if !res.Changed {
		fmt.Fprintf(stderr, "aclc: vovacl: %s %q: the ACL already says that; %s not changed\n", o.Type, o.Address(), *spec)
	} else if err := doc.Write(); err != nil {
		errorf(stderr, "vovacl: %v", err)
		return exitError
	}
	fmt.Fprint(stdout, vov.FormatACL(res.Object.ACL))
	return exitOK
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	out := []string{}
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
