package admission

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sync"

	"github.com/aclc-dev/aclc/builtins"
)

// Names of the admission builtins.
const (
	DecodeErrorName   = "aclc.k8s_decode_error"
	UserInfoErrorName = "aclc.user_info_error"
	// RegexMatchAnyName is the name of the pattern-list matching builtin.
	RegexMatchAnyName = "aclc.regex_match_any"
)

// Builtins returns the admission policy's host builtins, sorted by name:
// the decoding checks with the Kubernetes types and the settings' pattern
// matching with Go's regexp, as YuniKorn's webhook runs them.
func Builtins() []builtins.Builtin {
	return []builtins.Builtin{DecodeErrorBuiltin(), RegexMatchAnyBuiltin(), UserInfoErrorBuiltin()}
}

// DecodeErrorBuiltin is "aclc.k8s_decode_error"(kind string, object any)
// string: the message of decoding the object with the Kubernetes type of
// the kind, as YuniKorn's webhook does, or "" when it decodes.
func DecodeErrorBuiltin() builtins.Builtin {
	return builtins.Builtin{
		Name:        DecodeErrorName,
		Description: "k8s_decode_error(kind string, object any) string: Go's decoder message for the object as the kind's Kubernetes type, or \"\"",
		Args:        []string{"kind", "object"},
		Func: func(args []json.RawMessage) (json.RawMessage, error) {
			if len(args) != 2 {
				return nil, fmt.Errorf("%s: want 2 arguments, got %d", DecodeErrorName, len(args))
			}
			var kind string
			if err := json.Unmarshal(args[0], &kind); err != nil {
				return nil, fmt.Errorf("%s: operand 1 must be string but got %s", DecodeErrorName, builtins.JSONKind(args[0]))
			}
			return json.Marshal(DecodeError(kind, args[1]))
		},
	}
}

// UserInfoErrorBuiltin is "aclc.user_info_error"(value string) string: why
// YuniKorn refuses a pre-set user.info annotation, or "" when it accepts it.
func UserInfoErrorBuiltin() builtins.Builtin {
	return builtins.Builtin{
		Name:        UserInfoErrorName,
		Description: "user_info_error(value string) string: the decoder message YuniKorn denies a pre-set user.info value with, or \"\"",
		Args:        []string{"value"},
		Func: func(args []json.RawMessage) (json.RawMessage, error) {
			if len(args) != 1 {
				return nil, fmt.Errorf("%s: want 1 argument, got %d", UserInfoErrorName, len(args))
			}
			var v string
			if err := json.Unmarshal(args[0], &v); err != nil {
				return nil, fmt.Errorf("%s: operand 1 must be string but got %s", UserInfoErrorName, builtins.JSONKind(args[0]))
			}
			msg := ""
			if err := ValidateAnnotation(v); err != nil {
				msg = err.Error()
			}
			return json.Marshal(msg)
		},
	}
}

// RegexMatchAnyBuiltin is "aclc.regex_match_any"(patterns [string], s
// string) bool: whether any pattern matches s unanchored, with Go's regexp
// as YuniKorn uses it. A pattern that does not compile never matches.
func RegexMatchAnyBuiltin() builtins.Builtin {
	return builtins.Builtin{
		Name:        RegexMatchAnyName,
		Description: "regex_match_any(patterns array[string], s string) boolean: Go's MatchString of any pattern on s",
		Args:        []string{"patterns", "s"},
		Func: func(args []json.RawMessage) (json.RawMessage, error) {
			if len(args) != 2 {
				return nil, fmt.Errorf("%s: want 2 arguments, got %d", RegexMatchAnyName, len(args))
			}
			var patterns []string
			if err := json.Unmarshal(args[0], &patterns); err != nil {
				return nil, fmt.Errorf("%s: operand 1 must be array[string] but got %s", RegexMatchAnyName, builtins.JSONKind(args[0]))
			}
			var s string
			if err := json.Unmarshal(args[1], &s); err != nil {
				return nil, fmt.Errorf("%s: operand 2 must be string but got %s", RegexMatchAnyName, builtins.JSONKind(args[1]))
			}
			for _, p := range patterns {
				v, ok := compiled.Load(p)
				if !ok {
					re, err := regexp.Compile(p)
					if err != nil {
						v = err
					} else {
						v = re
					}
					compiled.Store(p, v)
				}
				if re, ok := v.(*regexp.Regexp); ok && re.MatchString(s) {
					return json.RawMessage("true"), nil
				}
			}
			return json.RawMessage("false"), nil
		},
	}
}

// compiled caches the patterns RegexMatchAny has compiled; the lists come
// from settings, so the set is small and lives as long as the process.
var compiled sync.Map // pattern → *regexp.Regexp, or error
