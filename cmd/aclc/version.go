package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// buildVersion describes the binary from what the Go toolchain stamped in
// it: the module version, the VCS state it was built from, and the versions
// of the runtimes it embeds.
type buildVersion struct {
	Version, Commit, Time string
	Modified              bool
	Go, OPA, Wazero       string
}

func readBuildVersion() buildVersion {
	v := buildVersion{Version: "(devel)", Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		v.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	for _, d := range bi.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		switch d.Path {
		case "github.com/open-policy-agent/opa":
			v.OPA = d.Version
		case "github.com/tetratelabs/wazero":
			v.Wazero = d.Version
		}
	}
	return v
}

// aclcVersion is the module version alone, for bundle manifests.
func aclcVersion() string { return readBuildVersion().Version }

func versionString() string { return readBuildVersion().String() }

// String renders the version as aclc version prints it.
func (v buildVersion) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "aclc %s\n", v.Version)
	if v.Commit != "" {
		mod := ""
		if v.Modified {
			mod = " (modified)"
		}
		fmt.Fprintf(&b, "commit: %s%s\n", v.Commit, mod)
	}
	if v.Time != "" {
		fmt.Fprintf(&b, "commit time: %s\n", v.Time)
	}
	fmt.Fprintf(&b, "go: %s\n", v.Go)
	fmt.Fprintf(&b, "opa: %s\n", orUnknown(v.OPA))
	fmt.Fprintf(&b, "wazero: %s\n", orUnknown(v.Wazero))
	fmt.Fprintf(&b, "yunikorn: %s (the default --yunikorn-version; known: %s)\n", release.DefaultName, strings.Join(release.Known(), ", "))
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown (not in the build information)"
	}
	return s
}

func newVersionCommand() *cobra.Command {
	cmd := newCommand("version", "print aclc's version, the OPA, wazero and Go versions it was built with, and the YuniKorn releases it decides as",
		"  aclc version\n  aclc --version", func(cmd *cobra.Command, args []string) int {
			fmt.Fprint(cmd.OutOrStdout(), versionString())
			return exitOK
		})
	cmd.Args = cobra.NoArgs
	return cmd
}
