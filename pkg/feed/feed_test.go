package feed

import (
	"context"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/kube"
)

// "-" is read through Stdin, once per load, and named as StdinName; a
// feed without Stdin refuses "-" rather than reading the process's own.
func TestFilesReadStandardInputThroughTheCaller(t *testing.T) {
	calls := 0
	fs := Files{Paths: []string{"-"}, Release: release.Default(), StdinName: "<stdin>", Stdin: func() ([]byte, error) {
		calls++
		return []byte("partitions:\n  - name: default\n    queues:\n      - name: root\n        submitacl: alice\n"), nil
	}}
	f, err := New(context.Background(), fs, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Load()
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || s.Queues() == nil || strings.Join(s.Files(), ",") != "<stdin>" {
		t.Errorf("stdin read %d times, files %q", calls, s.Files())
	}
	if _, err := (Files{Paths: []string{"-"}, Release: release.Default()}).Load(); err == nil {
		t.Errorf("a feed without Stdin read \"-\"")
	}
}

// A feed names its sources for messages: the files, or the API server
// and the files beside it.
func TestDescribeNamesTheClusterAndTheFiles(t *testing.T) {
	if got := Describe(nil, []string{"a.yaml", "b.yaml"}); got != "a.yaml, b.yaml" {
		t.Errorf("files: %q", got)
	}
	got := Describe(&kube.Options{Namespace: "yunikorn"}, []string{"vov.yaml"})
	if !strings.Contains(got, "yunikorn") || !strings.HasSuffix(got, " and vov.yaml") {
		t.Errorf("cluster: %q", got)
	}
}
