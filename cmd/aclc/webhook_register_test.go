package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// TestWarnLeftOutNamesNamespacesYuniKornProcesses pins that a namespace
// the webhook configurations leave out as bypassed is warned about
// exactly when YuniKorn's settings process it.
func TestWarnLeftOutNamesNamespacesYuniKornProcesses(t *testing.T) {
	for _, tc := range []struct {
		name, bypass string
		leftOut      []string
		warned       []string
	}{
		{"YuniKorn's default bypasses kube-system", "", []string{"kube-system"}, nil},
		{"a namespace YuniKorn processes", "", []string{"kube-system", "team-a"}, []string{"team-a"}},
		{"kube-system no longer bypassed", "^other$", []string{"kube-system"}, []string{"kube-system"}},
		{"nothing left out", "^other$", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: yunikorn-configs}\ndata:\n  queues.yaml: |\n    partitions: [{name: default, queues: [{name: root}]}]\n"
			if tc.bypass != "" {
				cm += "  admissionController.filtering.bypassNamespaces: \"" + tc.bypass + "\"\n"
			}
			path := filepath.Join(dir, "cm.yaml")
			if err := os.WriteFile(path, []byte(cm), 0o644); err != nil {
				t.Fatal(err)
			}
			s, err := translate.LoadSources([]string{path}, "")
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			warnLeftOut(slog.New(slog.NewTextHandler(&buf, nil)), s, tc.leftOut)
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				if i := strings.Index(l, "namespace="); i >= 0 {
					got = append(got, l[i+len("namespace="):])
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.warned, ",") {
				t.Errorf("warned about %v, want %v:\n%s", got, tc.warned, buf.String())
			}
		})
	}
}
