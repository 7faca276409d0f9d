package builtins

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

const groupFile = `# /etc/group of a test host
root:x:0:
dev:x:1000:alice,bob

ops:!:1001:bob,alice
  # an indented comment
nobody-here:x:1002:
sa:x:1003:carol
`

const yamlFile = `# users and their groups
alice: [dev, ops]
bob:
  - ops
  - dev
"system:serviceaccount:ns:sa": [sa]
carol: []
`

// TestFileResolver pins the file resolver's two formats: a user's groups in
// file order, an unknown user failing like the os resolver does.
func TestFileResolver(t *testing.T) {
	for _, tc := range []struct {
		name, format, data string
		cases              []resolveCase
	}{
		{"etc group lists a user's groups in file order", "group", groupFile, []resolveCase{
			{"member of two groups", "alice", []string{"dev", "ops"}, ""},
			{"order is the file's, not the member list's", "bob", []string{"dev", "ops"}, ""},
			{"a group's own name is not a member", "root", nil, "lookup failed for user: root"},
			{"member of the last group", "carol", []string{"sa"}, ""},
			{"unknown user fails", "mallory", nil, "lookup failed for user: mallory"},
		}},
		{"yaml maps users to their groups in list order", "yaml", yamlFile, []resolveCase{
			{"flow list", "alice", []string{"dev", "ops"}, ""},
			{"block list keeps its order", "bob", []string{"ops", "dev"}, ""},
			{"quoted service account user", "system:serviceaccount:ns:sa", []string{"sa"}, ""},
			{"empty list is a known user without groups", "carol", []string{}, ""},
			{"unknown user fails", "mallory", nil, "lookup failed for user: mallory"},
		}},
		{"crlf line ends are accepted", "group", "dev:x:1000:alice\r\nops:x:1001:alice\r\n", []resolveCase{
			{"both groups", "alice", []string{"dev", "ops"}, ""},
		}},
		{"a byte order mark is ignored", "yaml", "\ufeffalice: [dev]\n", []resolveCase{
			{"yaml after the mark", "alice", []string{"dev"}, ""},
		}},
		{"an empty file knows nobody", "group", "", []resolveCase{
			{"unknown user fails", "alice", nil, "lookup failed for user: alice"},
		}},
		{"a comment-only file knows nobody", "group", "# nothing\n\n", []resolveCase{
			{"unknown user fails", "alice", nil, "lookup failed for user: alice"},
		}},
		{"a group line with three colons ending in one is a group line", "group", "docker:x:999:\ndev:x:1000:alice\n", []resolveCase{
			{"member of dev only", "alice", []string{"dev"}, ""},
		}},
		{"a yaml document marker selects yaml", "yaml", "---\nalice: [dev]\n", []resolveCase{
			{"user from the document", "alice", []string{"dev"}, ""},
		}},
		{"yaml groups may look like numbers", "yaml", "alice: [1000, dev]\n", []resolveCase{
			{"the text is kept", "alice", []string{"1000", "dev"}, ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := isYAML([]byte(tc.data)); got != (tc.format == "yaml") {
				t.Errorf("isYAML = %v, want format %s", got, tc.format)
			}
			f, err := ParseFileResolver("users", []byte(tc.data))
			if err != nil {
				t.Fatalf("ParseFileResolver: %v", err)
			}
			runResolveCases(t, f, tc.cases)
		})
	}
}

// TestFileResolverErrors pins the file:line errors of malformed files.
func TestFileResolverErrors(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"group line with too few fields",
			"dev:x:1000:alice\nops:x:1001\n",
			`g:2:1: want 4 colon-separated fields (group:password:gid:members), got 3`},
		{"group line with too many fields",
			"dev:x:1000:alice:bob\n",
			`g:1:1: want 4 colon-separated fields (group:password:gid:members), got 5`},
		{"comments and blank lines count as lines",
			"# c\n\ndev:x:1000:alice\nbroken\n",
			`g:4:1: want 4 colon-separated fields (group:password:gid:members), got 1`},
		{"empty group name",
			":x:1000:alice\n",
			`g:1:1: empty group name`},
		{"gid not a number",
			"dev:x:abc:alice\n",
			`g:1:7: want a group id (a number) as the third field`},
		{"negative gid",
			"dev:x:-1:alice\n",
			`g:1:7: want a group id (a number) as the third field`},
		{"empty gid",
			"dev:x::alice\n",
			`g:1:7: want a group id (a number) as the third field`},
		{"trailing comma leaves an empty member",
			"dev:x:1000:alice,\n",
			`g:1:18: empty member name`},
		{"space after a comma",
			"dev:x:1000:alice, bob\n",
			`g:1:18: member name contains white space or an unprintable character (character 1)`},
		{"duplicate member",
			"dev:x:1000:alice,alice\n",
			`g:1:18: duplicate member, first at column 12`},
		{"duplicate group",
			"dev:x:1000:alice\nops:x:1001:\ndev:x:1002:bob\n",
			`g:3:1: duplicate group, first on line 1`},
		{"invalid utf-8",
			"dev:x:1000:al\xffice\n",
			`g:1:14: line is not valid UTF-8`},
		{"yaml value not a list",
			"alice: [dev]\nbob: dev\n",
			`g:2:6: want the user's groups as a list, got a string`},
		{"yaml null value",
			"alice:\nbob: [dev]\n",
			`g:1:7: want the user's groups as a list, got null`},
		{"yaml map value",
			"alice: {dev: true}\n",
			`g:1:8: want the user's groups as a list, got a map`},
		{"yaml top level not a map",
			"- alice\n- bob\n",
			`g:1:1: want a map of user to list of groups, got a list`},
		{"yaml nested list as group",
			"alice:\n  - dev\n  - [ops]\n",
			`g:3:5: want a group name, got a list`},
		{"yaml empty group name",
			"alice: [dev, \"\"]\n",
			`g:1:14: empty group name`},
		{"yaml duplicate group",
			"alice: [dev, dev]\n",
			`g:1:14: duplicate group of the user, first at 1:9`},
		{"yaml duplicate user",
			"alice: [dev]\nbob: []\nalice: [ops]\n",
			`g:3:1: duplicate user, first on line 1`},
		{"yaml empty user name",
			"\"\": [dev]\n",
			`g:1:1: empty user name`},
		{"yaml user with a space",
			"\"a b\": [dev]\n",
			`g:1:1: user name contains white space or an unprintable character (character 2)`},
		{"yaml alias",
			"alice: &g [dev]\nbob: *g\n",
			`g:2:6: want the user's groups as a list, got an alias (aliases are not supported)`},
		{"yaml merge key",
			"base: &b [dev]\n<<: {x: [y]}\n",
			`g:2:1: want a user name as key, got a merge key (<<)`},
		{"yaml syntax error",
			"alice: [dev\nbob: [ops]\n",
			`g:1: invalid YAML: did not find expected ',' or ']'`},
		{"two yaml documents",
			"alice: [dev]\n---\nbob: [ops]\n",
			`g:2:1: want one YAML document, found another`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseFileResolver("g", []byte(tc.data))
			if err == nil {
				t.Fatalf("ParseFileResolver accepted it: %v", f.Users())
			}
			if err.Error() != tc.want {
				t.Errorf("error = %s\nwant    %s", err, tc.want)
			}
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Errorf("error %v is not a *FileError", err)
			}
		})
	}
}

// TestLoadFileResolver pins that a file on disk is read and its errors name
// the path.
func TestLoadFileResolver(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "group")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte(groupFile), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("alice: dev\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := NewResolver("file=" + good)
	if err != nil {
		t.Fatalf("NewResolver: %v", err)
	}
	if r.Name() != "file" {
		t.Errorf("Name() = %q, want file", r.Name())
	}
	if got, _ := r.Resolve("alice"); !slices.Equal(got, []string{"dev", "ops"}) {
		t.Errorf("alice = %q", got)
	}
	_, err = LoadFileResolver(bad)
	if want := bad + `:1:8: want the user's groups as a list, got a string`; errText(err) != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

// TestFileResolverUsersIsACopy pins that Users and Resolve hand out copies:
// a build that edits the map must not change later lookups.
func TestFileResolverUsersIsACopy(t *testing.T) {
	f, err := ParseFileResolver("y", []byte(yamlFile))
	if err != nil {
		t.Fatal(err)
	}
	u := f.Users()
	want := map[string][]string{
		"alice": {"dev", "ops"}, "bob": {"ops", "dev"},
		"system:serviceaccount:ns:sa": {"sa"}, "carol": {},
	}
	if !maps.EqualFunc(u, want, slices.Equal) {
		t.Fatalf("Users() = %q, want %q", u, want)
	}
	if u["carol"] == nil {
		t.Error("Users()[carol] is nil, want an empty slice")
	}
	u["alice"][0] = "changed"
	delete(u, "bob")
	g, _ := f.Resolve("alice")
	g[1] = "changed"
	if got, err := f.Resolve("alice"); err != nil || !slices.Equal(got, []string{"dev", "ops"}) {
		t.Errorf("alice after edits = %q, %v", got, err)
	}
	if _, err := f.Resolve("bob"); err != nil {
		t.Errorf("bob after edits: %v", err)
	}
}

// renderYAML writes a user table back as a resolver file, every scalar
// double-quoted so any name survives.
func renderYAML(t testing.TB, users map[string][]string) []byte {
	root := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	for _, u := range slices.Sorted(maps.Keys(users)) {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, g := range users[u] {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: g, Style: yaml.DoubleQuotedStyle})
		}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: u, Style: yaml.DoubleQuotedStyle}, seq)
	}
	out, err := yaml.Marshal(root)
	if err != nil {
		t.Fatalf("render %q: %v", users, err)
	}
	return out
}

// FuzzParseFileResolver: parsing never panics, and an accepted file gives a
// resolver whose Users() resolve as listed and round-trip through the YAML
// format.
func FuzzParseFileResolver(f *testing.F) {
	for _, seed := range []string{
		groupFile, yamlFile, "", "# c\n", "docker:x:999:\n", "---\n", "{}\n",
		"alice: [dev]\n", "a:b:c: [x]\n", "\"a:b:c\": [x]\n", "alice: &a [dev]\nbob: *a\n",
		"dev:x:1000:alice,\n", "alice:\n  - dev\n  - ops\n", "dev:x:1000:al\u00e9,b\u00f6b\n",
		"- x\n", "alice: [dev\n", "a: []\n---\nb: []\n", "1: [2]\ntrue: [null]\n",
		shadowLines[0] + "\n" + shadowLines[1] + "\n", "x:y:1:\n" + shadowLines[0] + "\n", "alice: *secrethash\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseFileResolver("fuzz", data)
		if err != nil {
			return
		}
		users := r.Users()
		for u, groups := range users {
			got, err := r.Resolve(u)
			if err != nil || !slices.Equal(got, groups) {
				t.Fatalf("Resolve(%q) = %q, %v; Users() has %q", u, got, err, groups)
			}
		}
		again, err := ParseFileResolver("again", renderYAML(t, users))
		if err != nil {
			t.Fatalf("rendered %q does not parse: %v\n%s", users, err, renderYAML(t, users))
		}
		if got := again.Users(); !maps.EqualFunc(got, users, slices.Equal) {
			t.Fatalf("round trip: %q, want %q", got, users)
		}
	})
}

// shadowLines are what a groups file swapped for a shadow-style file holds.
var shadowLines = []string{
	"root:$6$saltsalt$2vNP0g5ZQ4kq1Rt8mHkDmoJz3Y:19000:0:99999:7:::",
	"sue:$y$j9T$Qv3a1b2c3d4e5f$Zx9Yw8Vu7Ts6:19000:0:99999:7:::",
}

// TestFileResolverErrorsQuoteNoContent pins that an error about a groups
// file names the file, line and column and what was expected, never the
// line: the error is logged and served on /readyz, and the file may have
// been swapped for one holding password hashes.
func TestFileResolverErrorsQuoteNoContent(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"a shadow file read as YAML names the value, not the user", strings.Join(shadowLines, "\n") + "\n",
			"shadow:1:63: want the user's groups as a list, got null"},
		{"a shadow line read as a group line gives the field count", "x:y:1:\n" + shadowLines[0] + "\n",
			"shadow:2:1: want 4 colon-separated fields (group:password:gid:members), got 9"},
		{"a bad gid is pointed at", "x:y:1:\nroot:$6$salt$hash:abc:\n", "shadow:2:19: want a group id (a number) as the third field"},
		{"a bad member is pointed at", "x:y:1:a,$6$ salt\n", "shadow:1:9: member name contains white space or an unprintable character (character 4)"},
		{"a YAML anchor name is not quoted", "alice: *secrethash\n", "shadow: invalid YAML: unknown anchor '…' referenced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFileResolver("shadow", []byte(tc.data))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v\nwant    %s", err, tc.want)
			}
			for _, secret := range []string{"$6$", "$y$", "saltsalt", "secret", "abc", "root"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q quotes the file's content %q", err, secret)
				}
			}
		})
	}
}

// TestLoadFileResolverRefusesWhatIsNotARegularFile pins that a named pipe
// or a device given as the groups file is refused at once, naming the path
// and what it is: reading either would never end.
func TestLoadFileResolverRefusesWhatIsNotARegularFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "groups")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"a named pipe is refused", fifo, fifo + " is a named pipe, not a regular file"},
		{"a character device is refused", "/dev/zero", "/dev/zero is a character device, not a regular file"},
		{"a directory is refused", filepath.Dir(fifo), filepath.Dir(fifo) + " is a directory, not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := LoadFileResolver(tc.path); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error = %v, want %q", err, tc.want)
				}
			case <-time.After(time.Minute):
				t.Fatal("still reading after a minute")
			}
		})
	}
}
