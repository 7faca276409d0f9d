package cel

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/cel-go/cel"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// validityPolicy is the generated ValidatingAdmissionPolicy of YuniKorn's
// default settings.
func validityPolicy(t *testing.T) *admissionregistrationv1.ValidatingAdmissionPolicy {
	t.Helper()
	docs, _, err := build([]translate.Input{{Name: "yunikorn-configs.yaml", Data: []byte("admissionController.accessControl.bypassAuth: \"false\"\n")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range decodeStrict(t, docs) {
		if vap, ok := o.(*admissionregistrationv1.ValidatingAdmissionPolicy); ok {
			return vap
		}
	}
	t.Fatal("no ValidatingAdmissionPolicy in the build")
	return nil
}

// presetProgram compiles a policy expression over the pre-set value in
// the API server's CEL environment, with variables.preset bound to a
// string (preset), variables.presetTop to a string (presetTop) and
// variables.jsonChecks to a list of booleans (jsonChecks).
func presetProgram(t *testing.T, expr string) cel.Program {
	t.Helper()
	env, err := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()).Env(environment.NewExpressions)
	if err != nil {
		t.Fatal(err)
	}
	if env, err = env.Extend(cel.Variable("preset", cel.StringType), cel.Variable("presetTop", cel.StringType),
		cel.Variable("jsonChecks", cel.ListType(cel.BoolType))); err != nil {
		t.Fatal(err)
	}
	expr = strings.NewReplacer("variables.preset.value()", "preset", "variables.presetTop", "presetTop", "variables.jsonChecks", "jsonChecks").Replace(expr)
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		t.Fatalf("compile: %v", iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	return prg
}

// TestValidityAgreesWithGo pins the validating policy's validity check on
// pre-set values to YuniKorn's (json.Unmarshal into UserGroupInformation,
// admission.ValidateAnnotation): the same verdict, and on a refusal Go's
// error text. Where a regular expression cannot follow Go, the row says
// so and the test checks that it still differs.
func TestValidityAgreesWithGo(t *testing.T) {
	vap := validityPolicy(t)
	vars := map[string]string{}
	for _, v := range vap.Spec.Variables {
		vars[v.Name] = v.Expression
	}
	validExpr := vars["valid"]
	if validExpr == "" || vars["presetTop"] == "" || vars["jsonChecks"] == "" {
		t.Fatal("no valid, presetTop or jsonChecks variable in the policy")
	}
	valid := presetProgram(t, validExpr)
	// The message of a failed validity check: the expression's first
	// branch, taken when the check fails.
	// A valid value not in YuniKorn's form gets the policies' own
	// message; an invalid one YuniKorn's, then the guard's suffix.
	guard := "variables.presetChecked && variables.allowed && !variables.presetExact ? (variables.valid ? " + strconv.Quote(wantCompactRefusal) + " : "
	const tail = ` + variables.presetSuffix) : ""`
	msgExpr := vap.Spec.Validations[1].MessageExpression
	if !strings.HasPrefix(msgExpr, guard) || !strings.HasSuffix(msgExpr, tail) {
		t.Fatalf("the validity message is not guarded by its check: %.80s", msgExpr)
	}
	message := presetProgram(t, strings.TrimSuffix(strings.TrimPrefix(msgExpr, guard), tail))
	presetTop, jsonChecks := presetProgram(t, vars["presetTop"]), presetProgram(t, vars["jsonChecks"])
	for _, tc := range []struct {
		rule, value string
		differs     string // why the policy cannot follow Go here; "" when it does
	}{
		{"an empty object is valid", `{}`, ""},
		{"null is valid", `null`, ""},
		{"white space around the value is valid", " \n{\"user\": \"a\"}\t", ""},
		{"user and groups of strings are valid", `{"user":"a","groups":["x","y"]}`, ""},
		{"null groups and null elements are valid", `{"user":null,"groups":[null,"x"]}`, ""},
		{"field names match case-insensitively", `{"USER":"x","Groups":["a"]}`, ""},
		{"the long s folds to s in a field name", `{"uſer":1}`, ""},
		{"unknown fields hold any JSON", `{"x":{"y":[1,-2.5e3,null,"s"],"w":true},"n":0}`, ""},
		{"escapes in strings are valid", `{"user":"a\"b\\c\u00e9\n"}`, ""},
		{"an empty value is the end of input", ``, ""},
		{"white space alone is the end of input", "  \n", ""},
		{"an array is not an object", `[]`, ""},
		{"a string is not an object", `"str"`, ""},
		{"a number is not an object", `12`, ""},
		{"a bool is not an object", `false`, ""},
		{"a numeric user is refused", `{"user":1}`, ""},
		{"an object user is refused", `{"user":{}}`, ""},
		{"groups as a string is refused", `{"groups":"g"}`, ""},
		{"a numeric group is refused", `{"groups":["a",1]}`, ""},
		{"text after the value is refused", `{"user":"a"}x`, ""},
		{"a second value is refused", `{}{}`, ""},
		{"a character that starts no value is refused", `xyz`, ""},
		{"an unquoted key is refused", `{ user: "a"}`, ""},
		{"a truncated object is the end of input", `{"user":"a"`, ""},
		{"a truncated string is the end of input", `{"user":"a`, ""},
		{"a truncated list is the end of input", `{"groups":["a"`, ""},
		{"a missing value is the end of input", `{"user":`, ""},
		{"a truncated key is the end of input", `{"us`, ""},
		{"a lone brace is the end of input", `{`, ""},
		{"a truncated value two levels deep is the end of input", `{"x":{"y":[1`, "only the closers of one open list or object are tried"},
		{"a missing colon is refused", `{"user" "a"}`, "a syntax error inside the value is worded generically"},
		{"deep nesting in an unknown field is valid", `{"x":[[[[1]]]]}`, "regular expressions cannot count brackets: unknown fields nest at most a fixed depth"},
		{"an escaped field name is the field", `{"\u0075ser":1}`, "a key written with escapes is another key to the regular expression"},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			goErr := admission.ValidateAnnotation(tc.value)
			out, _, err := valid.Eval(map[string]any{"preset": tc.value})
			if err != nil {
				t.Fatalf("valid: %v", err)
			}
			celValid := out.Value().(bool)
			agree := celValid == (goErr == nil)
			if agree && !celValid {
				act := map[string]any{"preset": tc.value}
				for name, prg := range map[string]cel.Program{"presetTop": presetTop, "jsonChecks": jsonChecks} {
					v, _, err := prg.Eval(act)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					act[name] = v
				}
				msg, _, err := message.Eval(act)
				if err != nil {
					t.Fatalf("message: %v", err)
				}
				agree = msg.Value().(string) == goErr.Error()
				if !agree && tc.differs == "" {
					t.Errorf("message %q, Go says %q", msg.Value(), goErr)
				}
			} else if !agree && tc.differs == "" {
				t.Errorf("policy says valid=%t, Go says %v", celValid, goErr)
			}
			if agree && tc.differs != "" {
				t.Errorf("agrees with Go, but the row says it differs (%s): drop the reason", tc.differs)
			}
		})
	}
}
