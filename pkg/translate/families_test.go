package translate

import (
	"errors"
	"slices"
	"strings"
	"testing"

	hostpolicy "github.com/aclc-dev/aclc/policy/host"
	policy "github.com/aclc-dev/aclc/policy/rego"
)

const (
	vovSource   = "vov:\n  owner: joe\n  host: pluto\n"
	queueSource = "partitions:\n  - name: default\n    queues:\n      - name: root\n        submitacl: '*'\n"
)

// Each source goes to the family that claims it, or to the one --kind
// forces; a forced family refuses what another family claims.
func TestFamiliesReadWhatTheyClaim(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		inputs []Input
		force  Kind
		want   string // an error's text, "" for none
		vov    bool
		queues bool
	}{
		{name: "a vov: key is VOV's", inputs: []Input{{Name: "a.yaml", Data: []byte(vovSource)}}, vov: true},
		{name: "any other file is YuniKorn's", inputs: []Input{{Name: "q.yaml", Data: []byte(queueSource)}}, queues: true},
		{name: "both families in one build", inputs: []Input{{Name: "q.yaml", Data: []byte(queueSource)}, {Name: "a.yaml", Data: []byte(vovSource)}}, vov: true, queues: true},
		{name: "forced VOV reads a file without the key", inputs: []Input{{Name: "q.yaml", Data: []byte(queueSource)}}, force: KindVOV, want: "q.yaml"},
		{name: "forced YuniKorn refuses a VOV source", inputs: []Input{{Name: "a.yaml", Data: []byte(vovSource)}}, force: KindYuniKornQueues,
			want: "a.yaml: this is a VOV ACL source (top-level vov: key) or a vovacl script (lines of vovacl commands), not a YuniKorn configuration"},
		{name: "a vovacl script beside a VOV source is VOV's", inputs: []Input{{Name: "s.vovacl", Data: []byte("% vovacl -reset S\n")}, {Name: "a.yaml", Data: []byte(vovSource + "objects: [{type: set, name: S, owner: joe}]\n")}}, vov: true},
		{name: "a vovacl script alone is refused", inputs: []Input{{Name: "s.vovacl", Data: []byte("vovacl -reset S\n")}},
			want: "s.vovacl: a vovacl script edits the objects of a VOV ACL source"},
		{name: "forced VOV refuses a directory", inputs: []Input{{Name: dir, Dir: dir}}, force: KindVOV,
			want: dir + ": a directory is read as a mounted YuniKorn ConfigMap, not as a VOV source"},
		{name: "an unknown kind names the kinds", inputs: []Input{{Name: "a.yaml", Data: []byte(vovSource)}}, force: "lsf",
			want: `unknown source kind "lsf" (want yunikorn-queues, yunikorn-admission or vov)`},
		{name: "a second VOV source", inputs: []Input{{Name: "a.yaml", Data: []byte(vovSource)}, {Name: "b.yaml", Data: []byte(vovSource)}},
			want: "b.yaml: a second VOV ACL source (the first is a.yaml); a build describes one project"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Sources{}
			err := s.AddInputs(tc.inputs, tc.force)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrSource) {
					t.Fatalf("err = %v, want ErrSource with %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (s.VOV() != nil) != tc.vov || (s.Queues() != nil) != tc.queues {
				t.Errorf("VOV %t, queues %t; want %t, %t", s.VOV() != nil, s.Queues() != nil, tc.vov, tc.queues)
			}
			if len(s.Files()) != len(tc.inputs) {
				t.Errorf("files %v, want one per input", s.Files())
			}
		})
	}
}

// A family's host twins are modules of its own policy directories: the
// portable module in policy/rego, its twin in policy/host, so that a build
// that swaps one in never leaves a decision without its module.
func TestHostModulesAreTheFamilysOwn(t *testing.T) {
	portable, host := policy.Modules(), hostpolicy.Modules()
	for _, f := range families {
		for _, m := range f.HostModules() {
			for _, path := range []string{m.Portable, m.Host} {
				dir, _, _ := strings.Cut(path, "/")
				if !slices.Contains(f.Policies(), dir) {
					t.Errorf("%s: %s is not in the family's directories %v", f.Describe(), path, f.Policies())
				}
			}
			if _, ok := portable[m.Portable]; !ok {
				t.Errorf("%s: no module %s in policy/rego", f.Describe(), m.Portable)
			}
			if _, ok := host[m.Host]; !ok {
				t.Errorf("%s: no module %s in policy/host", f.Describe(), m.Host)
			}
		}
	}
}
