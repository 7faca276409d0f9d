package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/acl/vov"
	"github.com/aclc-dev/aclc/pkg/translate"
)

const vovaclSynopsis = `vovacl --spec FILE [-v [-v]] [-agent AGENT] [-actions "CAPS"] (-append|-set|-delete|-show|-reset)
       [--as USER [--host HOST] [--osgroups G1,G2]] OBJECT
  aclc vovacl --spec FILE [SCRIPT...] --export`

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

  # the vovacl script that turns VOV's default ACLs into the source's:
  aclc vovacl --spec acls.yaml --export > setup.vovacl

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

-v, as VOV's vovacl, increases verbosity: on stderr, what was read (the source, the
object, its ACL's line), what the edit changes entry by entry, and what was written;
-v -v adds the ACL before the edit and the lines of FILE that change. stdout is the
same with or without -v.

--export writes, on stdout, the vovacl commands that turn VOV's default ACL of
every object of FILE (with the vovacl SCRIPTs given applied to it) into the ACL
it has, entry for entry and in order: read back over FILE with every acl:
removed, the script gives the same ACLs and so the same decisions. An entry
that grants nothing cannot be written with vovacl and is left out, with a
comment. FILE is not changed.

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

// verbosity counts -v flags: vovacl's "Increase verbosity", once per -v;
// -v=false resets it, as the flag package's boolean -v did.
type verbosity int

func (v *verbosity) String() string { return strconv.Itoa(int(*v)) }
func (v *verbosity) Type() string   { return "count" }
func (v *verbosity) Set(s string) error {
	if s == "+1" {
		*v++
		return nil
	}
	on, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	if on {
		*v++
	} else {
		*v = 0
	}
	return nil
}

// vovaclOptions are vovacl's flags.
type vovaclOptions struct {
	*commandLine
	spec, agent, as, host, osgroups string
	actions                         []string
	ops                             map[string]*bool
	verbose                         int
	export                          bool
}

// vovaclOps are vovacl's operations, in the order VOV's usage lists them.
var vovaclOps = []struct{ name, usage string }{
	{"append", "add the capabilities to the agent's entry"},
	{"set", "replace the agent's capabilities"},
	{"delete", "remove the capabilities from the agent's entry, or the entry without -actions"},
	{"show", "print the object's ACL as vovacl -show does"},
	{"reset", "write the default ACL"},
}

func vovaclFlags(fs *pflag.FlagSet, o *vovaclOptions) {
	fs.StringVar(&o.spec, "spec", "", "the VOV ACL source FILE to show or edit (required)")
	fs.StringVar(&o.agent, "agent", "", "the AGENT of the entry: \"USER name\", OWNER, ... (or KIND name as two arguments)")
	fs.StringArrayVar(&o.actions, "actions", nil, "the CAPS of the entry, space- or comma-separated; may repeat")
	o.ops = map[string]*bool{}
	for _, op := range vovaclOps {
		o.ops[op.name] = fs.Bool(op.name, false, op.usage)
	}
	fs.BoolVar(&o.export, "export", false, "write the vovacl script that turns VOV's default ACLs into FILE's (with the SCRIPTs given applied) on stdout")
	fs.StringVar(&o.as, "as", "", "check the change as USER: DELEGATE is needed to edit, VIEW to show")
	fs.StringVar(&o.host, "host", "", "with --as: the HOST the user connects from")
	fs.StringVar(&o.osgroups, "osgroups", "", "with --as: the user's OS groups G1,G2, comma-separated (default: resolved by the source's resolver)")
	fs.VarPF((*verbosity)(&o.verbose), "verbose", "v", "increase verbosity: what was read, what changes and what was written, on stderr; repeat for the ACL before and the changed lines").NoOptDefVal = "+1"
}

func newVovaclCommand(cl *commandLine) *cobra.Command {
	o := &vovaclOptions{commandLine: cl}
	cmd := newCommand(vovaclSynopsis, "show or edit a VOV object's ACL in a source file, as VOV's vovacl does", vovaclExamples, o.run)
	vovaclFlags(cmd.Flags(), o)
	registerCompletions(cmd)
	return cmd
}

func (o *vovaclOptions) run(cmd *cobra.Command, pos []string) int {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	set := map[string]bool{}
	cmd.Flags().Visit(func(f *pflag.Flag) { set[f.Name] = true })

	if o.export {
		return o.runExport(cmd, pos, set)
	}
	var op string
	for _, name := range []string{"append", "set", "delete", "show", "reset"} {
		if *o.ops[name] {
			if op != "" {
				return usageErr(cmd, "give one operation, not -%s and -%s", op, name)
			}
			op = name
		}
	}
	switch {
	case op == "":
		return usageErr(cmd, "give one operation: -append, -set, -delete, -show or -reset")
	case o.spec == "":
		return usageErr(cmd, "--spec FILE is required")
	case len(pos) == 0:
		return usageErr(cmd, "no OBJECT given")
	case len(pos) > 1:
		return usageErr(cmd, "one OBJECT, got %d: %s", len(pos), strings.Join(pos, " "))
	case o.as == "" && (set["host"] || set["osgroups"]):
		return usageErr(cmd, "--host and --osgroups go with --as")
	}
	object := pos[0]

	var edit vov.Edit
	switch op {
	case "show", "reset":
		if set["agent"] || len(o.actions) > 0 {
			return usageErr(cmd, "-%s takes no -agent and no -actions", op)
		}
		edit.Op = vov.OpReset // unused by -show
	default:
		if !set["agent"] {
			return usageErr(cmd, "-%s needs -agent", op)
		}
		a, err := vov.ParseAgent(o.agent)
		if err != nil {
			return usageErr(cmd, "-agent %q: %v", o.agent, strings.TrimPrefix(err.Error(), vov.ErrInvalidAgent.Error()+": "))
		}
		caps, named, err := vov.ParseCapabilityWords(vov.SplitCapabilities(strings.Join(o.actions, " ")))
		if err != nil {
			return usageErr(cmd, "-actions: %v", err)
		}
		switch {
		case len(caps) == 0 && len(o.actions) > 0:
			// An empty -actions on -delete would remove the whole entry.
			return usageErr(cmd, "-actions names no capability")
		case len(caps) == 0 && op != "delete":
			return usageErr(cmd, "-%s needs -actions", op)
		}
		edit = vov.Edit{Op: vov.EditOp(op), Agent: a, Capabilities: caps, Named: named}
	}

	cmdACL := vov.ACLCommand{Spec: o.spec, Object: object, Show: op == "show", Edit: edit}
	if o.verbose > 0 {
		cmdACL.Log = func(level int, line string) {
			if int(o.verbose) >= level {
				fmt.Fprintf(stderr, "vovacl: %s\n", line)
			}
		}
	}
	if o.as != "" {
		cmdACL.As = &vov.Input{User: o.as, Host: o.host}
		if set["osgroups"] {
			cmdACL.As.OSGroups = splitList(o.osgroups)
		}
	}
	cmdACL.Warn = func(w vov.Diagnostic) { fmt.Fprintln(stderr, w) }
	res, err := cmdACL.Run()
	if err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	if res.Unchanged != "" {
		errorf(stderr, "%s", res.Unchanged)
	}
	fmt.Fprint(stdout, res.ACL)
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

// runExport writes the vovacl script of the source (and of the scripts
// given after it): the commands that turn VOV's default ACLs into its
// ACLs.
func (o *vovaclOptions) runExport(cmd *cobra.Command, scripts []string, set map[string]bool) int {
	for _, name := range []string{"append", "set", "delete", "show", "reset"} {
		if *o.ops[name] {
			return usageErr(cmd, "--export takes no -%s: it writes the commands of every ACL", name)
		}
	}
	switch {
	case o.spec == "":
		return usageErr(cmd, "--spec FILE is required")
	case set["agent"] || len(o.actions) > 0 || set["as"] || set["host"] || set["osgroups"]:
		return usageErr(cmd, "--export takes no -agent, -actions, --as, --host or --osgroups")
	}
	s, err := o.readSourceFiles(append([]string{o.spec}, scripts...), translate.KindVOV)
	if err != nil {
		errorf(cmd.ErrOrStderr(), "%v", err)
		return exitError
	}
	if s.VOV() == nil {
		errorf(cmd.ErrOrStderr(), "%s is not a VOV ACL source", o.spec)
		return exitError
	}
	_, err = cmd.OutOrStdout().Write(vov.ExportScript(s.VOV()))
	if err != nil {
		errorf(cmd.ErrOrStderr(), "%v", err)
		return exitError
	}
	return exitOK
}
