package cel

import (
	"fmt"
	"path/filepath"
	"testing"

	kruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/target/kubernetes"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/tests"
)

// TestCorpusVersions decides the user.info cases of the corpus that name
// the YuniKorn releases they hold for (versions:) with the policies built
// for each of those releases and every part of the guard off: the
// policies then decide as YuniKorn does (TestCorpus decides the guard).
func TestCorpusVersions(t *testing.T) {
	root := repoRoot(t)
	files, err := tests.Load(root, filepath.Join(root, "tests", "corpus", "yunikorn"))
	if err != nil {
		t.Fatal(err)
	}
	clusters := map[string]*cluster{}
	defer func() {
		for _, c := range clusters {
			c.close()
		}
	}()
	n := 0
	for _, f := range files {
		for i := range f.Cases {
			c := &f.Cases[i]
			if c.Entrypoint != translate.EntrypointAdmissionReview || len(c.Versions) == 0 {
				continue
			}
			for _, rel := range c.Releases {
				n++
				t.Run(c.Note+"/"+rel.Name(), func(t *testing.T) {
					if diff := decideAs(t, c, rel, clusters); diff != "" {
						t.Error(diff)
					}
				})
			}
		}
	}
	if n == 0 {
		t.Fatal("no versioned user.info case in tests/corpus/yunikorn")
	}
}

// decideAs is decide with the policies built as YuniKorn release rel.
func decideAs(t *testing.T, c *tests.Case, rel translate.YuniKornRelease, clusters map[string]*cluster) string {
	t.Helper()
	s, err := (&translate.Sources{}).WithYuniKornRelease(rel)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddInputs(c.Inputs, translate.KindAuto); err != nil {
		return fmt.Sprintf("build: %v", err)
	}
	s = s.WithGuardOff(admission.GuardParts())
	objs, err := kubernetes.AllObjects(s)
	if err != nil {
		return fmt.Sprintf("build: %v", err)
	}
	docs := make([][]byte, len(objs))
	for i, o := range objs {
		if docs[i], err = o.YAML(); err != nil {
			t.Fatal(err)
		}
	}
	r, out, why := admitCase(t, c, s, clusters, rel.Name(), func() []kruntime.Object { return decodeStrict(t, docs) })
	if out == nil {
		return why
	}
	return compare(c, r, out)
}
