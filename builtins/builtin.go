package builtins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Builtin describes one custom builtin: its Rego name, argument and result kinds for declarations, and a JSON-level implementation.
//
// Working on JSON keeps this package free of OPA: each runtime adapter
// converts its own values to JSON and back, and all of them share Func.
type Builtin struct {
	Name        string   // e.g. "aclc.user_groups"
	Description string   // states the argument and result types, for declarations and docs
	Args        []string // names, for docs
	// Decl is the builtin's type, as OPA's capabilities file writes a
	// builtin's "decl" (arguments and result, with names and
	// descriptions): the adapters that type-check policies read it, and
	// this package stays free of OPA.
	Decl json.RawMessage
	// Nondeterministic: the result may differ between two calls with the
	// same arguments (a directory lookup), so it is never folded at
	// compile time.
	Nondeterministic bool
	// Func is the implementation: JSON in, JSON out; a nil result is
	// undefined, an error a malformed call.
	Func func(args []json.RawMessage) (json.RawMessage, error)
	// FuncContext, when not nil, is Func under the caller's context: a
	// builtin that waits on the outside (a directory lookup) stops waiting
	// when ctx is done. Adapters use Call, which picks it.
	FuncContext func(ctx context.Context, args []json.RawMessage) (json.RawMessage, error)
}

// Call runs the builtin under ctx: FuncContext when it has one, else Func.
func (b Builtin) Call(ctx context.Context, args []json.RawMessage) (json.RawMessage, error) {
	if b.FuncContext != nil {
		return b.FuncContext(ctx, args)
	}
	return b.Func(args)
}

// UserGroupsName is the Rego name of the group resolution builtin.
const UserGroupsName = "aclc.user_groups"

// userGroupsResult is the result of aclc.user_groups; a struct, not a map,
// so that its JSON is byte-for-byte the same on every call.
type userGroupsResult struct {
	Groups []string `json:"groups"`
	Error  string   `json:"error,omitempty"`
	// Panic is the runtime error YuniKorn would die with; the policy then
	// denies even a forced request.
	Panic string `json:"panic,omitempty"`
}

// UserGroups is "aclc.user_groups"(user string): {"groups": [...]} on
// success, or {"groups": [...what was found...], "error": "<message>"} when
// the lookup failed, through the cache's GetUserGroup; "panic" is added when
// YuniKorn would panic on the lookup. A lookup failure is a
// value, not an error, because YuniKorn's ConvertUGI still uses it (a forced
// application falls back to nogroup); only a malformed call is an error.
//
// The lookup runs under the caller's context when called through
// FuncContext (Call): a lookup the caller gave up on answers with an error
// wrapping the context's cause, and is not cached.
func UserGroups(c *Cache) Builtin {
	call := func(ctx context.Context, args []json.RawMessage) (json.RawMessage, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("%s: want 1 argument, got %d", UserGroupsName, len(args))
		}
		var user string
		if kind := JSONKind(args[0]); kind != "string" {
			return nil, fmt.Errorf("%s: operand 1 must be string but got %s", UserGroupsName, kind)
		}
		if err := json.Unmarshal(args[0], &user); err != nil {
			return nil, fmt.Errorf("%s: operand 1: %w", UserGroupsName, err)
		}
		ug, err := c.getContext(ctx, user)
		res := userGroupsResult{Groups: ug.Groups}
		if res.Groups == nil {
			res.Groups = []string{} // JSON [] rather than null: the policy iterates it
		}
		if err != nil {
			res.Error = err.Error()
			var p *PanicError
			if errors.As(err, &p) {
				res.Panic = p.Cause
			}
		}
		return json.Marshal(res)
	}
	return Builtin{
		Name: UserGroupsName,
		Description: "user_groups(user string) object: the user's groups as YuniKorn resolves them, " +
			`{"groups": [string]}, with "error": string added when the lookup failed`,
		Args: []string{"user"},
		Decl: json.RawMessage(`{"type":"function",` +
			`"args":[{"name":"user","description":"the user name","type":"string"}],` +
			`"result":{"name":"result","description":"{\"groups\": [...]}, with \"error\" when the lookup failed","type":"object",` +
			`"static":[{"key":"groups","value":{"type":"array","dynamic":{"type":"string"}}}],` +
			`"dynamic":{"key":{"type":"string"},"value":{"type":"string"}}}}`),
		Nondeterministic: true,
		Func:             func(args []json.RawMessage) (json.RawMessage, error) { return call(context.Background(), args) },
		FuncContext:      call,
	}
}

// JSONKind names the JSON type of v in OPA's words, for the type errors
// of a builtin's operands ("operand 1 must be string but got number").
func JSONKind(v json.RawMessage) string {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
