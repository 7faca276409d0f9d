package shim

import (
	"encoding/json"
	"os"
	"sort"
	"sync"
	"testing"
)

// UserInfoCase is one user.info review the admission controller decided,
// as a line of the file ACLC_ORACLE_SHIM_CASES names: the ConfigMaps the
// controller read, the namespaces with their annotations, the review, and
// the controller's answer. tests/cel (TestUserInfoAgreesWithYuniKorn)
// reads it and holds aclc's Kubernetes policies to that answer.
type UserInfoCase struct {
	Release string `json:"release"`
	// Case names the case: the corpus file, index and note, or the draw
	// and its seed.
	Case       string                       `json:"case"`
	ConfigMaps []CaseConfigMap              `json:"configMaps"`
	Namespaces map[string]map[string]string `json:"namespaces"`
	Review     json.RawMessage              `json:"review"`
	YuniKorn   CaseAnswer                   `json:"yunikorn"`
}

// CaseConfigMap is one ConfigMap the controller read.
type CaseConfigMap struct {
	Name       string            `json:"name"`
	Namespace  string            `json:"namespace,omitempty"`
	Data       map[string]string `json:"data,omitempty"`
	BinaryData map[string][]byte `json:"binaryData,omitempty"`
}

// CaseAnswer is the controller's answer: the verdict, the denial message,
// the whole JSON Patch, the user.info annotation at each place of the
// object once the patch's annotation operations are applied ("metadata",
// "spec.template.metadata", "spec.jobTemplate.spec.template.metadata"),
// whether the patch marks the pod ignore-application, and why the patch
// could not be applied to the review's object, if it could not.
type CaseAnswer struct {
	UID               string            `json:"uid"`
	Allowed           bool              `json:"allowed"`
	Message           string            `json:"message,omitempty"`
	Patch             []map[string]any  `json:"patch,omitempty"`
	UserInfo          map[string]string `json:"userInfo"`
	IgnoreApplication bool              `json:"ignoreApplication,omitempty"`
	Err               string            `json:"err,omitempty"`
}

// caseWriter appends UserInfoCases to the file ACLC_ORACLE_SHIM_CASES
// names; nil (writing nothing) when it names none.
type caseWriter struct {
	mu sync.Mutex
	f  *os.File
}

func openCases(t *testing.T) *caseWriter {
	path := os.Getenv("ACLC_ORACLE_SHIM_CASES")
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

// write appends the review decided on source and nss with the
// controller's answer yk.
func (w *caseWriter) write(t *testing.T, name string, source []byte, nss map[string]namespaceEntry, review []byte, yk Answer) {
	if w == nil {
		return
	}
	t.Helper()
	cms, err := ConfigMaps(source)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := UserInfoCase{Release: Release(), Case: name, Namespaces: map[string]map[string]string{}, Review: json.RawMessage(review),
		YuniKorn: CaseAnswer{UID: yk.UID, Allowed: yk.Allowed, Message: yk.Message, Patch: yk.Ops, UserInfo: yk.At,
			IgnoreApplication: yk.IgnoreApp, Err: yk.Err}}
	if c.YuniKorn.UserInfo == nil {
		c.YuniKorn.UserInfo = map[string]string{}
	}
	for _, cm := range cms {
		if cm != nil {
			c.ConfigMaps = append(c.ConfigMaps, CaseConfigMap{Name: cm.Name, Namespace: cm.Namespace, Data: cm.Data, BinaryData: cm.BinaryData})
		}
	}
	names := make([]string, 0, len(nss))
	for n := range nss {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a := nss[n].Annotations
		if a == nil {
			a = map[string]string{}
		}
		c.Namespaces[n] = a
	}
	// A review that is not JSON is written as the JSON string of its text.
	if !json.Valid(review) {
		c.Review, _ = json.Marshal(string(review))
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.f.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}
