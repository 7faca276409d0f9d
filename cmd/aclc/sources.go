package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/feed"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// stdinName is how messages name a SOURCE, input or bundle read from "-".
const stdinName = "<stdin>"

// commandLine is what one command line shares among its flags and
// commands: standard input, read at most once however many places name
// "-", and the YuniKorn release (--yunikorn-version) its sources are read
// as. Each run of the CLI has its own; nothing of it outlives the run.
type commandLine struct {
	stdin     io.Reader
	stdinData []byte
	stdinErr  error
	stdinRead bool
	release   release.Version
}

func newCommandLine(stdin io.Reader) *commandLine {
	return &commandLine{stdin: stdin, release: release.Default()}
}

func (cl *commandLine) readStdin() ([]byte, error) {
	if !cl.stdinRead {
		cl.stdinRead = true
		cl.stdinData, cl.stdinErr = translate.ReadSourceFrom(stdinName, cl.stdin)
	}
	return cl.stdinData, cl.stdinErr
}

// openInput opens a file to read, or standard input for "-".
func (cl *commandLine) openInput(path string) (io.ReadCloser, error) {
	if path == "-" {
		b, err := cl.readStdin()
		if err != nil {
			return nil, err
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return os.Open(path)
}

// sourceFiles are the SOURCE arguments as package feed reads them; "-"
// is standard input.
func (cl *commandLine) sourceFiles(paths []string, kind translate.Kind) feed.Files {
	return feed.Files{Paths: paths, Kind: kind, Release: cl.release, Stdin: cl.readStdin, StdinName: stdinName}
}

// readSourceFiles loads the SOURCE arguments; "-" is standard input.
func (cl *commandLine) readSourceFiles(paths []string, kind translate.Kind) (*translate.Sources, error) {
	return cl.sourceFiles(paths, kind).Load()
}

// loadSources reads the sources and settles their group resolution; each
// engine opened on them gets its own cache over that resolution.
func (cl *commandLine) loadSources(paths []string, kind translate.Kind, resolver string, static bool) (*translate.Sources, error) {
	s, err := cl.readSourceFiles(paths, kind)
	if err != nil {
		return nil, err
	}
	return s.WithGroupResolution(resolver, static)
}

// readBundleFile reads a bundle file, or standard input for "-".
func (cl *commandLine) readBundleFile(path string) (*bundle.Bundle, error) {
	if path != "-" {
		return translate.ReadBundle(path)
	}
	raw, err := cl.readStdin()
	if err != nil {
		return nil, err
	}
	return translate.ParseBundle(stdinName, raw, nil)
}

// spoolStdin copies standard input to a file in a new temporary directory
// for the servers, which read their sources by name; the caller removes
// the directory.
func (cl *commandLine) spoolStdin(paths []string) ([]string, func(), error) {
	if !slices.Contains(paths, "-") {
		return paths, func() {}, nil
	}
	b, err := cl.readStdin()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "aclc-stdin-")
	if err != nil {
		return nil, nil, err
	}
	p := filepath.Join(dir, "stdin")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	out := slices.Clone(paths)
	for i := range out {
		if out[i] == "-" {
			out[i] = p
		}
	}
	return out, func() { os.RemoveAll(dir) }, nil
}

const resolverUsage = "group resolver for requests without groups: none, os, test, file=PATH (an /etc/group-style file or a YAML map user → groups) or ldap=DIR (YuniKorn's LDAP secret, one file per key; aclc's options ,dial-timeout=D and ,timeout=D bound connecting and the bind and search, 1s each by default: ldap=DIR,timeout=3s); default: the queue config's usergroupresolver.type (ldap reads /run/secrets/ldap), else none"

// sourceKinds are the values of --kind, for its completion.
func sourceKinds() []string {
	var out []string
	for _, k := range translate.Kinds() {
		out = append(out, string(k))
	}
	return out
}

// kindFlag adds the flags of a command that reads sources: --kind, and
// --yunikorn-version, which every such command reads its YuniKorn
// configuration as.
func kindFlag(fs *pflag.FlagSet, kind *string, cl *commandLine) {
	fs.Var(kindValue{kind}, "kind", "force the source kind instead of detecting it: "+translate.KindList())
	yunikornVersionFlag(fs, cl)
}

// releaseValue is --yunikorn-version: it refuses an unknown release as the
// command line is read, a usage error naming the known ones.
type releaseValue struct{ cl *commandLine }

func (r releaseValue) String() string { return r.cl.release.Name() }

func (r releaseValue) Set(v string) error {
	rel, err := release.Lookup(v)
	if err != nil {
		return err
	}
	r.cl.release = rel
	return nil
}

func (releaseValue) Type() string { return "version" }

// kindValue refuses an unknown kind as the command line is read, so that
// it is a usage error naming the kinds, not a failure to load.
type kindValue struct{ kind *string }

func (k kindValue) String() string {
	if k.kind == nil {
		return ""
	}
	return *k.kind
}

func (k kindValue) Set(v string) error {
	if v != "" && !slices.Contains(translate.Kinds(), translate.Kind(v)) {
		return errors.New("want " + translate.KindList())
	}
	*k.kind = v
	return nil
}

func (kindValue) Type() string { return "string" }

// fixedCompletion completes a flag from a fixed list.
func fixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}
