package oracle

import (
	"encoding/json"
	"maps"
	"os"
	"sync"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/tests/oracle/core"
)

// caseWriter appends PodCases to the file ACLC_ORACLE_CASES names.
type caseWriter struct {
	mu sync.Mutex
	f  *os.File
}

// openCases opens ACLC_ORACLE_CASES for appending, or returns nil when it
// is not set.
func openCases(t *testing.T) *caseWriter {
	path := os.Getenv("ACLC_ORACLE_CASES")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &caseWriter{f: f}
}

// write decides the pod-shaped form of every placement decided on a fresh
// core and appends it with YuniKorn's answer. A placement that crashes the
// core is left out: no policy answers a crash.
func (w *caseWriter) write(t *testing.T, rel release.Version, config []byte, decided []Decided) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, d := range decided {
		c, ok := PodShaped(rel, config, d.Request)
		if !ok {
			continue
		}
		cl, err := safeNew(config)
		if err != nil {
			continue
		}
		a := c.Request
		q, msg, panicked := safePlace(cl, core.App{Partition: a.Partition, ID: "app-1", Queue: a.Queue,
			UGI: core.UGI{User: a.User, Groups: a.Groups}, Tags: maps.Clone(a.Tags)})
		if panicked != "" {
			continue
		}
		c.YuniKorn.Allow, c.YuniKorn.Queue, c.YuniKorn.Message = msg == "", q, msg
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.f.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPodShaped pins how a placement request becomes the pod that asks for
// it and the application the shim submits for that pod.
func TestPodShaped(t *testing.T) {
	v19, err := release.Lookup("1.9.0")
	if err != nil {
		t.Fatal(err)
	}
	v15, err := release.Lookup("1.5.0")
	if err != nil {
		t.Fatal(err)
	}
	place := func(partition, queue, user string, tags map[string]string) Request {
		return Request{Partition: partition, Action: Place, Queue: queue, User: user, Groups: []string{"dev"}, Tags: tags}
	}
	for _, tc := range []struct {
		name     string
		rel      release.Version
		req      Request
		ok       bool
		ns, app  string
		wantTags map[string]string
		forced   bool
	}{
		{name: "another partition maps to no pod", rel: v19, req: place("other", "root.a", "sue", nil)},
		{name: "no user maps to no pod", rel: v19, req: place("", "root.a", "", nil)},
		{name: "a queue decision maps to no pod", rel: v19, req: Request{Action: "submit", Queue: "root.a", User: "sue"}},
		{name: "the namespace tag names the namespace", rel: v19, req: place("", "root.a", "sue", map[string]string{"namespace": "team-a", "team": "x"}), ok: true,
			ns: "team-a", app: "root.a", wantTags: map[string]string{"namespace": "team-a", "application.create.force": "false", tagTaskGroups: "", tagSchedParams: ""}},
		{name: "a namespace name the API server refuses becomes default", rel: v19, req: place("default", "", "sue", map[string]string{"namespace": "Sales"}), ok: true,
			ns: "default", wantTags: map[string]string{"namespace": "default", "application.create.force": "false", tagTaskGroups: "", tagSchedParams: ""}},
		{name: "kube-system is bypassed, so default", rel: v19, req: place("", "", "sue", map[string]string{"namespace": "kube-system"}), ok: true,
			ns: "default", wantTags: map[string]string{"namespace": "default", "application.create.force": "false", tagTaskGroups: "", tagSchedParams: ""}},
		{name: "the parent queue and force tags come from the namespace and the node name", rel: v19,
			req: place("", "", "sue", map[string]string{"namespace": "dev", "namespace.parentqueue": "root.teams", "application.create.force": "true"}), ok: true, forced: true,
			ns: "dev", wantTags: map[string]string{"namespace": "dev", "namespace.parentqueue": "root.teams", "application.create.force": "true", tagTaskGroups: "", tagSchedParams: ""}},
		{name: "1.5's shim sends root.default without a queue and no force tag", rel: v15,
			req: place("", "", "sue", map[string]string{"application.create.force": "true"}), ok: true,
			ns: "default", app: "root.default", wantTags: map[string]string{"namespace": "default", tagTaskGroups: "", tagSchedParams: ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := PodShaped(tc.rel, []byte("partitions: []"), tc.req)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if c.Namespace != tc.ns || c.Request.Queue != tc.app || c.Forced != tc.forced || !maps.Equal(c.Request.Tags, tc.wantTags) ||
				c.Request.Partition != "default" || c.Request.User != tc.req.User {
				t.Errorf("got namespace %q, forced %v, application %+v; want namespace %q, forced %v, queue %q, tags %v", c.Namespace, c.Forced, c.Request, tc.ns, tc.forced, tc.app, tc.wantTags)
			}
		})
	}
}
