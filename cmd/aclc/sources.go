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

// Standard input is read at most once per command line, however many
// places name "-".
var (
	stdinData []byte
	stdinErr  error
	stdinRead bool
)

func resetStdin() { stdinData, stdinErr, stdinRead = nil, nil, false }

// resetCommandLine forgets what the previous command line set.
func resetCommandLine() {
	resetStdin()
	yunikornRelease = release.Default()
}

func readStdin() ([]byte, error) {
	if !stdinRead {
		stdinRead = true
		stdinData, stdinErr = translate.ReadSourceFrom(stdinName, stdin)
	}
	return stdinData, stdinErr
}

// openInput opens a file to read, or standard input for "-".
func openInput(path string) (io.ReadCloser, error) {
	if path == "-" {
		b, err := readStdin()
		if err != nil {
			return nil, err
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	return os.Open(path)
}

// sourceFiles are the SOURCE arguments as package feed reads them; "-"
// is standard input.
func sourceFiles(paths []string, kind translate.Kind) feed.Files {
	return feed.Files{Paths: paths, Kind: kind, Release: yunikornRelease, Stdin: readStdin, StdinName: stdinName}
}

// readSourceFiles loads the SOURCE arguments; "-" is standard input.
func readSourceFiles(paths []string, kind translate.Kind) (*translate.Sources, error) {
	return sourceFiles(paths, kind).Load()
}

// loadSources reads the sources and settles their group resolution; each
// engine opened on them gets its own cache over that resolution.
func loadSources(paths []string, kind translate.Kind, resolver string, static bool) (*translate.Sources, error) {
	s, err := readSourceFiles(paths, kind)
	if err != nil {
		return nil, err
	}
	return s.WithGroupResolution(resolver, static)
}

// readBundleFile reads a bundle file, or standard input for "-".
func readBundleFile(path string) (*bundle.Bundle, error) {
	if path != "-" {
		return translate.ReadBundle(path)
	}
	raw, err := readStdin()
	if err != nil {
		return nil, err
	}
	return translate.ParseBundle(stdinName, raw, nil)
}

// spoolStdin copies standard input to a file in a new temporary directory
// for the servers, which read their sources by name; the caller removes
// the directory.
func spoolStdin(paths []string) ([]string, func(), error) {
	if !slices.Contains(paths, "-") {
		return paths, func() {}, nil
	}
	b, err := readStdin()
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
func kindFlag(fs *pflag.FlagSet, kind *string) {
	fs.Var(kindValue{kind}, "kind", "force the source kind instead of detecting it: "+translate.KindList())
	yunikornVersionFlag(fs)
}

// yunikornRelease is the --yunikorn-version of the command line being
// run; run resets it.
var yunikornRelease release.Version

// releaseValue refuses an unknown release as the command line is read: a
// usage error naming the known ones.
type releaseValue struct{}

func (releaseValue) String() string { return yunikornRelease.Name() }

func (releaseValue) Set(v string) error {
	r, err := release.Lookup(v)
	if err != nil {
		return err
	}
	yunikornRelease = r
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
