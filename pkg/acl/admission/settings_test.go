package admission

import (
	"reflect"
	"strings"
	"testing"
)

// TestSettingsFromMap pins YuniKorn's parsing of the admission keys (spec
// §1.2 defaults, §1.3 rules; upstream am_conf.go parseConfigBool,
// parseConfigRegexps, parseRegexes and am_conf_test.go).
func TestSettingsFromMap(t *testing.T) {
	type want struct {
		bypassAuth, trustControllers      bool
		systemUsers, externalUsers        []string
		externalGroups, processNamespaces []string
		bypassNamespaces, labelNamespaces []string
		noLabelNamespaces, fallbackKeys   []string
	}
	def := want{
		trustControllers: true,
		systemUsers:      []string{"^system:serviceaccount:kube-system:"},
		bypassNamespaces: []string{"^kube-system$"},
	}
	with := func(f func(w *want)) want {
		w := def
		f(&w)
		return w
	}
	tests := []struct {
		name string
		m    map[string]string
		want want
	}{
		{"absent keys take the defaults", nil, def},
		{"keys of other features are ignored", map[string]string{
			"admissionController.filtering.generateUniqueAppId": "xyz",
			"admissionController.filtering.defaultQueue":        "root.x",
			"queues.yaml": "partitions: []",
		}, def},
		{"present empty systemUsers is an empty list", map[string]string{KeySystemUsers: ""},
			with(func(w *want) { w.systemUsers = []string{} })},
		{"present empty bypassNamespaces bypasses nothing", map[string]string{KeyBypassNamespaces: ""},
			with(func(w *want) { w.bypassNamespaces = []string{} })},
		{"present empty bool falls back to the default", map[string]string{KeyTrustControllers: ""},
			with(func(w *want) { w.fallbackKeys = []string{KeyTrustControllers} })},
		{"bool 1 is true", map[string]string{KeyBypassAuth: "1"}, with(func(w *want) { w.bypassAuth = true })},
		{"bool t is true", map[string]string{KeyBypassAuth: "t"}, with(func(w *want) { w.bypassAuth = true })},
		{"bool T is true", map[string]string{KeyBypassAuth: "T"}, with(func(w *want) { w.bypassAuth = true })},
		{"bool TRUE is true", map[string]string{KeyBypassAuth: "TRUE"}, with(func(w *want) { w.bypassAuth = true })},
		{"bool true is true", map[string]string{KeyBypassAuth: "true"}, with(func(w *want) { w.bypassAuth = true })},
		{"bool True is true", map[string]string{KeyBypassAuth: "True"}, with(func(w *want) { w.bypassAuth = true })},
		{"bool 0 is false", map[string]string{KeyTrustControllers: "0"}, with(func(w *want) { w.trustControllers = false })},
		{"bool f is false", map[string]string{KeyTrustControllers: "f"}, with(func(w *want) { w.trustControllers = false })},
		{"bool F is false", map[string]string{KeyTrustControllers: "F"}, with(func(w *want) { w.trustControllers = false })},
		{"bool FALSE is false", map[string]string{KeyTrustControllers: "FALSE"}, with(func(w *want) { w.trustControllers = false })},
		{"bool false is false", map[string]string{KeyTrustControllers: "false"}, with(func(w *want) { w.trustControllers = false })},
		{"bool False is false", map[string]string{KeyTrustControllers: "False"}, with(func(w *want) { w.trustControllers = false })},
		{"bool yes is refused", map[string]string{KeyBypassAuth: "yes"},
			with(func(w *want) { w.fallbackKeys = []string{KeyBypassAuth} })},
		{"bool with a leading space is refused", map[string]string{KeyBypassAuth: " true"},
			with(func(w *want) { w.fallbackKeys = []string{KeyBypassAuth} })},
		{"bool xyz is refused", map[string]string{KeyTrustControllers: "xyz"},
			with(func(w *want) { w.fallbackKeys = []string{KeyTrustControllers} })},
		{"bool tRUE is refused", map[string]string{KeyTrustControllers: "tRUE"},
			with(func(w *want) { w.fallbackKeys = []string{KeyTrustControllers} })},
		{"list items are trimmed and empty items skipped", map[string]string{KeyExternalUsers: " ^a$ ,, ^b$ ,"},
			with(func(w *want) { w.externalUsers = []string{"^a$", "^b$"} })},
		{"a list of blanks is empty", map[string]string{KeyExternalGroups: " , ,"},
			with(func(w *want) { w.externalGroups = []string{} })},
		{"one bad pattern reverts the whole key", map[string]string{KeyBypassNamespaces: "^ok$,a(,^b$"},
			with(func(w *want) { w.fallbackKeys = []string{KeyBypassNamespaces} })},
		{"a bad pattern in a list defaulting to empty reverts to empty", map[string]string{KeyExternalUsers: "^alice$,[z-a]"},
			with(func(w *want) { w.externalUsers = []string{}; w.fallbackKeys = []string{KeyExternalUsers} })},
		{"a lookahead does not compile in RE2", map[string]string{KeySystemUsers: "^(?!x)"},
			with(func(w *want) { w.fallbackKeys = []string{KeySystemUsers} })},
		{"a brace repetition is split at its comma", map[string]string{KeyExternalUsers: "a{1,3}"},
			with(func(w *want) { w.externalUsers = []string{"a{1", "3}"} })},
		{"alternation keeps several names in one item", map[string]string{KeyProcessNamespaces: "^a$|^b$"},
			with(func(w *want) { w.processNamespaces = []string{"^a$|^b$"} })},
		{"every list key is read", map[string]string{
			KeySystemUsers: "s", KeyExternalUsers: "u", KeyExternalGroups: "g",
			KeyProcessNamespaces: "p", KeyBypassNamespaces: "b", KeyLabelNamespaces: "l", KeyNoLabelNamespaces: "n",
		}, want{
			trustControllers: true, systemUsers: []string{"s"}, externalUsers: []string{"u"}, externalGroups: []string{"g"},
			processNamespaces: []string{"p"}, bypassNamespaces: []string{"b"}, labelNamespaces: []string{"l"}, noLabelNamespaces: []string{"n"},
		}},
		{"fallbacks are listed in key order", map[string]string{KeyTrustControllers: "no", KeyBypassAuth: "no", KeyExternalUsers: "("},
			with(func(w *want) {
				w.externalUsers = []string{}
				w.fallbackKeys = []string{KeyBypassAuth, KeyExternalUsers, KeyTrustControllers}
			})},
	}
	empty := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := SettingsFromMap(tt.m)
			var keys []string
			for _, f := range s.Fallbacks {
				keys = append(keys, f.Key)
				if f.Value != tt.m[f.Key] || f.Reason == "" || f.File != "" || f.Line != 0 {
					t.Errorf("fallback %+v: want the raw value %q and a reason", f, tt.m[f.Key])
				}
			}
			got := want{
				bypassAuth: s.BypassAuth, trustControllers: s.TrustControllers,
				systemUsers: s.SystemUsers, externalUsers: s.ExternalUsers, externalGroups: s.ExternalGroups,
				processNamespaces: s.ProcessNamespaces, bypassNamespaces: s.BypassNamespaces,
				labelNamespaces: s.LabelNamespaces, noLabelNamespaces: s.NoLabelNamespaces,
				fallbackKeys: keys,
			}
			w := tt.want
			for _, p := range []*[]string{&w.systemUsers, &w.externalUsers, &w.externalGroups, &w.processNamespaces,
				&w.bypassNamespaces, &w.labelNamespaces, &w.noLabelNamespaces} {
				*p = empty(*p)
			}
			if !reflect.DeepEqual(got, w) {
				t.Errorf("got  %+v\nwant %+v", got, w)
			}
			// The compiled patterns follow the sources.
			for _, pair := range []struct {
				src []string
				n   int
			}{
				{s.SystemUsers, len(s.systemUsers)}, {s.ExternalUsers, len(s.externalUsers)},
				{s.ExternalGroups, len(s.externalGroups)}, {s.ProcessNamespaces, len(s.processNamespaces)},
				{s.BypassNamespaces, len(s.bypassNamespaces)}, {s.LabelNamespaces, len(s.labelNamespaces)},
				{s.NoLabelNamespaces, len(s.noLabelNamespaces)},
			} {
				if len(pair.src) != pair.n {
					t.Errorf("sources %q but %d compiled patterns", pair.src, pair.n)
				}
			}
		})
	}
}

// TestFallbackReasons pins what aclc check tells the user about a value
// YuniKorn refuses (spec §1.3: the error is logged, the default used).
func TestFallbackReasons(t *testing.T) {
	tests := []struct {
		name   string
		key    string
		value  string
		reason string
	}{
		{"refused bool names the accepted values and the default", KeyBypassAuth, "yes",
			`"yes" is not a boolean (strconv.ParseBool accepts 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False, untrimmed); YuniKorn uses the default false`},
		{"bad pattern names the pattern, the regexp error and the default list", KeyBypassNamespaces, "^a$,b(",
			"pattern \"b(\" does not compile: error parsing regexp: missing closing ): `b(`; one bad item reverts the whole key, so YuniKorn uses the default [\"^kube-system$\"]"},
		{"bad pattern of an empty default says the list is empty", KeyExternalGroups, "*",
			"pattern \"*\" does not compile: error parsing regexp: missing argument to repetition operator: `*`; one bad item reverts the whole key, so YuniKorn uses the default (an empty list)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := SettingsFromMap(map[string]string{tt.key: tt.value})
			if len(s.Fallbacks) != 1 {
				t.Fatalf("fallbacks = %+v", s.Fallbacks)
			}
			if got := s.Fallbacks[0].Reason; got != tt.reason {
				t.Errorf("reason\n got %s\nwant %s", got, tt.reason)
			}
			if got, want := s.Fallbacks[0].String(), tt.key+": "+tt.reason; got != want {
				t.Errorf("String() = %s", got)
			}
		})
	}
}

// TestSettingsMapRoundTrip checks that Map gives back keys that parse to the
// same settings, so that a normalised data document can be re-read.
func TestSettingsMapRoundTrip(t *testing.T) {
	for _, m := range []map[string]string{
		nil,
		{KeySystemUsers: "", KeyBypassAuth: "T", KeyExternalGroups: "(?i)^ops$, ^dev"},
		{KeyProcessNamespaces: "a{1,3}", KeyNoLabelNamespaces: "^batch$", KeyTrustControllers: "0"},
	} {
		s := SettingsFromMap(m)
		back := SettingsFromMap(s.Map())
		back.Fallbacks, s.Fallbacks = nil, nil
		if !reflect.DeepEqual(back.Map(), s.Map()) || len(back.Fallbacks) != 0 {
			t.Errorf("%v: round trip changed the settings: %v vs %v", m, s.Map(), back.Map())
		}
	}
}

// TestIsAnnotationAllowed is the truth table of spec §4.1 (upstream
// usergroup.go IsAnnotationAllowed, usergroup_test.go).
func TestIsAnnotationAllowed(t *testing.T) {
	const controller = "system:serviceaccount:kube-system:deployment-controller"
	tests := []struct {
		name   string
		m      map[string]string
		user   string
		groups []string
		want   bool
	}{
		{"default systemUsers admit a kube-system service account", nil, controller, nil, true},
		{"default systemUsers do not admit kube-controller-manager", nil, "system:kube-controller-manager", nil, false},
		{"default systemUsers do not admit another namespace's service account", nil, "system:serviceaccount:default:sa", nil, false},
		{"an ordinary user is not allowed by default", nil, "alice", []string{"devs"}, false},
		{"trustControllers false ignores systemUsers", map[string]string{KeyTrustControllers: "false"}, controller, nil, false},
		{"empty systemUsers trusts no controller", map[string]string{KeySystemUsers: ""}, controller, nil, false},
		{"externalUsers admit a user", map[string]string{KeyExternalUsers: "^alice$"}, "alice", nil, true},
		{"externalUsers work with trustControllers false", map[string]string{KeyExternalUsers: "^alice$", KeyTrustControllers: "false"}, "alice", nil, true},
		{"externalGroups admit any matching group", map[string]string{KeyExternalGroups: "^ops$"}, "bob", []string{"devs", "ops"}, true},
		{"externalGroups can admit controllers with trustControllers false",
			map[string]string{KeyExternalGroups: "^system:serviceaccounts:kube-system$", KeyTrustControllers: "false"},
			controller, []string{"system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"}, true},
		{"externalGroups do not match the user name", map[string]string{KeyExternalGroups: "^alice$"}, "alice", nil, false},
		{"externalUsers do not match groups", map[string]string{KeyExternalUsers: "^ops$"}, "bob", []string{"ops"}, false},
		{"unanchored admin matches sysadmin-bob", map[string]string{KeyExternalUsers: "admin"}, "sysadmin-bob", nil, true},
		{"unanchored devs matches group nodevs-team", map[string]string{KeyExternalGroups: "devs"}, "x", []string{"nodevs-team"}, true},
		{"matching is case-sensitive", map[string]string{KeyExternalUsers: "^alice$"}, "Alice", nil, false},
		{"(?i) makes matching case-insensitive", map[string]string{KeyExternalUsers: "(?i)^alice$"}, "ALICE", nil, true},
		{"split a{1,3} matches a literal a{1", map[string]string{KeyExternalUsers: "a{1,3}"}, "xa{1y", nil, true},
		{"split a{1,3} no longer matches aa", map[string]string{KeyExternalUsers: "a{1,3}"}, "aa", nil, false},
		{"empty user with empty lists is not allowed", map[string]string{KeySystemUsers: ""}, "", nil, false},
		{"dot-star matches the empty user", map[string]string{KeyExternalUsers: ".*"}, "", nil, true},
		{"default systemUsers do not match the empty user", nil, "", nil, false},
		{"bypassAuth is not part of the predicate", map[string]string{KeyBypassAuth: "true"}, "alice", nil, false},
		{"a bad externalUsers list reverts to empty and admits nobody", map[string]string{KeyExternalUsers: "alice,("}, "alice", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SettingsFromMap(tt.m).IsAnnotationAllowed(tt.user, tt.groups); got != tt.want {
				t.Errorf("IsAnnotationAllowed(%q, %q) = %v, want %v", tt.user, tt.groups, got, tt.want)
			}
		})
	}
}

// TestNamespaceFilters pins shouldProcessNamespace and shouldLabelNamespace
// with the three-state namespace annotations (spec §5; upstream
// namespace_cache.go getAnnotationValue, admission_controller_test.go).
func TestNamespaceFilters(t *testing.T) {
	nsWith := func(name string, annotations map[string]string) map[string]Namespace {
		return map[string]Namespace{name: {Name: name, Annotations: annotations}}
	}
	tests := []struct {
		name           string
		m              map[string]string
		namespaces     map[string]Namespace
		ns             string
		process, label bool
	}{
		{"default settings process and label an ordinary namespace", nil, nil, "default", true, true},
		{"default settings bypass kube-system", nil, nil, "kube-system", false, true},
		{"the anchored default does not bypass kube-system-x", nil, nil, "kube-system-x", true, true},
		{"processNamespaces restricts to matches", map[string]string{KeyProcessNamespaces: "^prod-"}, nil, "dev-a", false, true},
		{"processNamespaces admits a match", map[string]string{KeyProcessNamespaces: "^prod-"}, nil, "prod-a", true, true},
		{"bypassNamespaces wins over processNamespaces", map[string]string{KeyProcessNamespaces: "^prod-", KeyBypassNamespaces: "-x$"}, nil, "prod-x", false, true},
		{"present empty bypassNamespaces processes kube-system", map[string]string{KeyBypassNamespaces: ""}, nil, "kube-system", true, true},
		{"labelNamespaces restricts labelling", map[string]string{KeyLabelNamespaces: "^a$"}, nil, "b", true, false},
		{"noLabelNamespaces stops labelling", map[string]string{KeyNoLabelNamespaces: "^batch$"}, nil, "batch", true, false},
		{"enableYuniKorn true processes a bypassed namespace", nil,
			nsWith("kube-system", map[string]string{AnnotationEnableYuniKorn: "true"}), "kube-system", true, true},
		{"enableYuniKorn false stops processing", nil,
			nsWith("default", map[string]string{AnnotationEnableYuniKorn: "false"}), "default", false, true},
		{"enableYuniKorn True is false", nil,
			nsWith("default", map[string]string{AnnotationEnableYuniKorn: "True"}), "default", false, true},
		{"enableYuniKorn empty is false", nil,
			nsWith("default", map[string]string{AnnotationEnableYuniKorn: ""}), "default", false, true},
		{"generateAppId true labels a no-label namespace", map[string]string{KeyNoLabelNamespaces: "^batch$"},
			nsWith("batch", map[string]string{AnnotationGenerateAppID: "true"}), "batch", true, true},
		{"generateAppId yes is false", nil,
			nsWith("default", map[string]string{AnnotationGenerateAppID: "yes"}), "default", true, false},
		{"a namespace without the annotations is unset", map[string]string{KeyNoLabelNamespaces: "^batch$"},
			nsWith("batch", map[string]string{"other": "true"}), "batch", true, false},
		{"another namespace's annotations do not count", nil,
			nsWith("other", map[string]string{AnnotationEnableYuniKorn: "false"}), "default", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := SettingsFromMap(tt.m)
			if got := s.ShouldProcessNamespace(tt.ns, tt.namespaces); got != tt.process {
				t.Errorf("ShouldProcessNamespace = %v, want %v", got, tt.process)
			}
			if got := s.ShouldLabelNamespace(tt.ns, tt.namespaces); got != tt.label {
				t.Errorf("ShouldLabelNamespace = %v, want %v", got, tt.label)
			}
		})
	}
}

// TestNilSettingsAreDefaults lets callers use a nil *Settings as YuniKorn
// without configuration.
func TestNilSettingsAreDefaults(t *testing.T) {
	var s *Settings
	if !s.IsAnnotationAllowed("system:serviceaccount:kube-system:x", nil) || s.ShouldProcessNamespace("kube-system", nil) {
		t.Error("nil settings do not behave as the defaults")
	}
	if got := string(s.Review([]byte(`{}`), nil)); !strings.Contains(got, invalidBodyUID) {
		t.Errorf("Review on nil settings = %s", got)
	}
}

// TestUserInfoValue pins the value written (spec §3.2).
func TestUserInfoValue(t *testing.T) {
	tests := []struct {
		name   string
		user   string
		groups []string
		want   string
	}{
		{"user then groups in request order", "alice", []string{"devs", "system:authenticated"},
			`{"user":"alice","groups":["devs","system:authenticated"]}`},
		{"HTML-safe escaping and quote escaping", `o'brien "x" <y>&`, []string{"g/1"},
			`{"user":"o'brien \"x\" \u003cy\u003e\u0026","groups":["g/1"]}`},
		{"empty user is omitted", "", []string{"g"}, `{"groups":["g"]}`},
		{"nil groups are omitted", "bob", nil, `{"user":"bob"}`},
		{"empty groups are omitted", "bob", []string{}, `{"user":"bob"}`},
		{"no user and no groups give an empty object", "", nil, `{}`},
		{"an empty group name is kept", "bob", []string{""}, `{"user":"bob","groups":[""]}`},
		{"non-ASCII is kept as UTF-8", "jürgen", nil, `{"user":"jürgen"}`},
		{"line and paragraph separators are escaped", "a\u2028b", nil, `{"user":"a\u2028b"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := UserInfoValue(tt.user, tt.groups); got != tt.want {
				t.Errorf("UserInfoValue = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestValidateAnnotation is every row of the table of spec §3.3 (upstream
// usergroup.go IsAnnotationValid, usergroup_test.go).
func TestValidateAnnotation(t *testing.T) {
	tests := []struct {
		name  string
		value string
		want  string // "" when accepted
	}{
		{"empty object is accepted", `{}`, ""},
		{"user and groups are accepted", `{"user":"joe","groups":["a"]}`, ""},
		{"JSON null is accepted", `null`, ""},
		{"unknown field username is accepted", `{"username":"joe"}`, ""},
		{"field names match case-insensitively", `{"USER":"x"}`, ""},
		{"surrounding white space is accepted", " \t\n{\"user\":\"x\"}\n ", ""},
		{"null groups are accepted", `{"user":"x","groups":null}`, ""},
		{"empty value fails", ``, "unexpected end of JSON input"},
		{"array fails", `[]`, "json: cannot unmarshal array into Go value of type si.UserGroupInformation"},
		{"string fails", `"str"`, "json: cannot unmarshal string into Go value of type si.UserGroupInformation"},
		{"numeric user fails", `{"user":1}`, "json: cannot unmarshal number into Go struct field UserGroupInformation.user of type string"},
		{"string groups fail", `{"user":"joe","groups":"g"}`, "json: cannot unmarshal string into Go struct field UserGroupInformation.groups of type []string"},
		{"numeric group fails", `{"user":"a","groups":[1]}`, "json: cannot unmarshal number into Go struct field UserGroupInformation.groups of type string"},
		{"trailing text fails", `{"user":"a"}x`, "invalid character 'x' after top-level value"},
		{"non-JSON fails", `xyzxyz`, "invalid character 'x' looking for beginning of value"},
		{"the documentation's unquoted example fails", `{ username: "yunikorn", groups: ["devs"] }`,
			"invalid character 'u' looking for beginning of object key string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateAnnotation(tt.value)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("ValidateAnnotation(%q) = %v, want accepted", tt.value, err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("ValidateAnnotation(%q) = %v, want %q", tt.value, err, tt.want)
			}
		})
	}
}
