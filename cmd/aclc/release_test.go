package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// TestYuniKornVersionFlag pins --yunikorn-version: every command that
// reads sources reads them as the release named, an unknown release is a
// usage error listing the known ones, and aclc version states the default.
func TestYuniKornVersionFlag(t *testing.T) {
	dir := t.TempDir()
	resolver := filepath.Join(dir, "queues.yaml")
	if err := os.WriteFile(resolver, []byte("partitions:\n  - name: default\n    usergroupresolver:\n      type: os\n    queues:\n      - name: root\n        submitacl: '*'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string // in stdout or stderr
	}{
		{"1.7.0 refuses usergroupresolver with its decoder's words", []string{"check", "--yunikorn-version", "1.7.0", resolver}, exitError,
			"queues.yaml:3:5: error: unknown key \"usergroupresolver\": YuniKorn 1.7.0 does not know it, YuniKorn 1.8.0 and later read it (YuniKorn: field usergroupresolver not found in type configs.PartitionConfig)"},
		{"1.8.0 accepts usergroupresolver", []string{"check", "--yunikorn-version", "1.8.0", resolver}, exitOK, "ok"},
		{"build reads as the release too", []string{"build", "--yunikorn-version", "1.5.2", "--output-file", filepath.Join(dir, "b.tar.gz"), resolver}, exitError, "YuniKorn 1.5.2 does not know it"},
		{"an unknown release is a usage error listing the known ones", []string{"eval", "--yunikorn-version", "1.4.0", "-e", "yunikorn/queues/decision", resolver}, exitUsage,
			strings.Join(release.Known(), ", ")},
		{"version states the default", []string{"version"}, exitOK, "yunikorn: " + release.DefaultName + " (the default --yunikorn-version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("%v = %d, want %d with %q\n%s%s", tt.args, code, tt.code, tt.want, stdout, stderr)
			}
		})
	}
}

// TestChartSchemaKnowsTheReleases pins the chart's yunikorn.version enum
// to the releases aclc knows.
func TestChartSchemaKnowsTheReleases(t *testing.T) {
	raw, err := os.ReadFile("../../charts/aclc/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			YuniKorn struct {
				Properties struct {
					Version struct {
						Enum []string `json:"enum"`
					} `json:"version"`
				} `json:"properties"`
			} `json:"yunikorn"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	want := append([]string{""}, release.Known()...)
	if got := schema.Properties.YuniKorn.Properties.Version.Enum; !slices.Equal(got, want) {
		t.Errorf("values.schema.json yunikorn.version enum %q, want %q", got, want)
	}
}

const (
	releasesDoc   = "../../README.md"
	releasesBegin = "<!-- releases: generated, do not edit -->\n"
	releasesEnd   = "<!-- /releases -->"
)

// releasesTable is the README's table of the release switches, from the
// registry the decisions read.
func releasesTable() string {
	var b strings.Builder
	b.WriteString("| switch | row | releases | what those releases do | decided | run beside YuniKorn's own code |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, s := range release.Switches() {
		decided := "no"
		if s.Decided {
			decided = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", s.Switch, s.Row, release.Span(s.Versions), s.Summary, decided, oracleCell(s))
	}
	return b.String()
}

// oracleCell says where the oracle runs the row's example: the part of
// YuniKorn and the releases, and whether any release the switch holds
// for is among them; or why it is not run.
func oracleCell(s release.Info) string {
	if s.Oracle == "" {
		return "no: " + s.NotRun
	}
	at := release.OracleReleases(s.Oracle)
	cell := "the " + s.Oracle + " at " + release.Span(at)
	if !slices.ContainsFunc(s.Versions, func(v string) bool { return slices.Contains(at, v) }) {
		cell += " (none of its releases is served)"
	}
	return cell
}

// TestReleasesDocumented keeps the README's table of releases and
// switches equal to the registry (-update rewrites it).
func TestReleasesDocumented(t *testing.T) {
	raw, err := os.ReadFile(releasesDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, releasesBegin), strings.Index(doc, releasesEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", releasesDoc, releasesBegin, releasesEnd)
	}
	want := releasesTable()
	if doc[i+len(releasesBegin):j] != want {
		if *update {
			if err := os.WriteFile(releasesDoc, []byte(doc[:i+len(releasesBegin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("the release table of %s is out of date: go test ./cmd/aclc -run TestReleasesDocumented -update rewrites it", releasesDoc)
	}
}
