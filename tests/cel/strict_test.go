package cel

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// TestStrictDecodingAcceptsEveryObject decodes every object the build
// writes with apimachinery's strict decoder into the
// admissionregistration/v1 types (unknown and duplicate fields refused),
// as kubectl apply --validate=strict and the API server's strict field
// validation do, and checks the decoder is strict: the same document with
// an unknown field is refused.
func TestStrictDecodingAcceptsEveryObject(t *testing.T) {
	codecs := serializer.NewCodecFactory(clientscheme.Scheme, serializer.EnableStrict)
	for _, src := range compileSources {
		t.Run(src.name, func(t *testing.T) {
			docs, _, err := build([]translate.Input{{Name: "yunikorn-configs.yaml", Data: []byte(src.text)}})
			if err != nil {
				t.Fatal(err)
			}
			for _, doc := range docs {
				obj, gvk, err := codecs.UniversalDeserializer().Decode(doc, nil, nil)
				if err != nil {
					t.Fatalf("strict decoding: %v\n%s", err, firstLines(doc, 12))
				}
				if gvk.Group != "admissionregistration.k8s.io" || gvk.Version != "v1" {
					t.Errorf("%T decodes as %s", obj, gvk)
				}
				tampered := bytes.Replace(doc, []byte("\nspec:\n"), []byte("\nspec:\n  notAField: 1\n"), 1)
				if _, _, err := codecs.UniversalDeserializer().Decode(tampered, nil, nil); err == nil || !strings.Contains(err.Error(), "notAField") {
					t.Errorf("%s with an unknown field: %v", gvk.Kind, err)
				}
			}
		})
	}
}
