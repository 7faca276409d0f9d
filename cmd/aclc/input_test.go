package main

import (
	"strings"
	"testing"
)

// An input aclc eval cannot read is an error, exit 1, that says where it
// goes wrong: a syntax error by line and column, as opa eval locates one
// (rego_parse_error at file:row:col), and a key the decision's input
// schema does not name by its name, which every engine would otherwise
// read as absent (a misspelled "action" denied as unknown action "").
func TestEvalInputErrors(t *testing.T) {
	const queues = "yunikorn/queues/decision"
	tests := []struct {
		name   string
		ep     string
		jsonl  bool
		input  string
		stdout string
		stderr string
	}{
		{name: "a misspelled key is an error naming the key", ep: queues,
			input:  `{"acton":"submit","queue":"root.test","user":"sue"}`,
			stderr: "aclc eval: <stdin>: unknown key \"acton\" (want action, forced, groups, partition, queue or user)\n"},
		{name: "a nested unknown key is named by its path", ep: "yunikorn/queues/placement",
			input:  `{"application":{"id":"a","usr":"sue"}}`,
			stderr: "aclc eval: <stdin>: unknown key \"application.usr\" (want groups, id, queue, tags or user)\n"},
		{name: "keys under a map the schema leaves open are not checked", ep: "yunikorn/queues/placement",
			input:  `{"application":{"id":"a","user":"sue","tags":{"anything":"x"}}}`,
			stdout: `"user": "sue"`},
		{name: "a syntax error gives its line and column", ep: queues,
			input:  "{\"queue\": \"root.test\",\n  \"action\": \"submit\",}",
			stderr: "aclc eval: <stdin>: line 2, column 22: invalid character '}' looking for beginning of object key string\n"},
		{name: "an input cut short gives where it ends", ep: queues,
			input:  "{\"queue\": \"root.test\",\n  \"action\"",
			stderr: "aclc eval: <stdin>: line 2, column 10: unexpected end of JSON input\n"},
		{name: "a second document is located", ep: queues,
			input:  `{} {}`,
			stderr: "aclc eval: <stdin>: line 1, column 4: more than one JSON document\n"},
		{name: "a --jsonl line's syntax error gives its line and column", ep: queues, jsonl: true,
			input:  "{\"queue\":\"root.test\",\"action\":\"submit\",\"user\":\"sue\"}\n  {\"queue\" 1}\n",
			stdout: "{\"allow\":true,\"reason\":\"submitacl of root.test allows everybody\"}\n{\"error\":\"line 2, column 12: invalid character '1' after object key\"}\n"},
		{name: "a --jsonl misspelled key is named on its line", ep: queues, jsonl: true,
			input:  "{\"acton\":\"submit\",\"queue\":\"root.test\",\"user\":\"sue\"}\n",
			stdout: "{\"error\":\"line 1: unknown key \\\"acton\\\" (want action, forced, groups, partition, queue or user)\"}\n"},
	}
	for _, tt := range tests {
		for _, eng := range []string{"native", "rego"} {
			t.Run(tt.name+"/"+eng, func(t *testing.T) {
				args := []string{"eval", "--engine", eng, "-e", tt.ep, seedConfig}
				if tt.jsonl {
					args = append(args, "--jsonl")
				}
				code, stdout, stderr := runCLI(t, tt.input, args...)
				wantCode := exitOK
				if tt.stderr != "" || strings.Contains(tt.stdout, `"error"`) {
					wantCode = exitError
				}
				if code != wantCode || stderr != tt.stderr || !strings.Contains(stdout, tt.stdout) {
					t.Errorf("exit %d, want %d\nstdout %q\nstderr %q\nwant   %q", code, wantCode, stdout, stderr, tt.stderr)
				}
				if tt.stdout == "" && stdout != "" {
					t.Errorf("stdout %q, want none", stdout)
				}
			})
		}
	}
}

// eval's help says what --fail means in aclc, not that it means what
// opa eval --fail does: opa fails only an undefined result, and an aclc
// decision is always defined.
func TestEvalHelpSaysWhatFailMeans(t *testing.T) {
	_, help, _ := runCLI(t, "", "eval", "--help")
	tests := []struct {
		name, text string
		want       bool
	}{
		{"the help does not borrow opa eval's --fail", "as opa eval --fail", false},
		{"the help says a denial fails, unlike opa eval --fail", "Unlike\nopa eval --fail, which fails only an undefined result, a denial fails here", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Contains(help, tt.text); got != tt.want {
				t.Errorf("help contains %q: %v, want %v\n%s", tt.text, got, tt.want, help)
			}
		})
	}
}
