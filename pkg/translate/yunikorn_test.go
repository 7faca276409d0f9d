package translate

import (
	"sort"
	"strings"
	"testing"
)

// The queue policy checks user names against these tables instead of the regex:
// configs.UserRegExp ^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$, the trailing "$" trimmed.
func TestUserNameTablesAreTheUserRegExp(t *testing.T) {
	tables := userNameTables()
	for class, want := range map[string]string{
		"first": "ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz",
		"next":  "#-./0123456789:@ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz",
	} {
		var got []string
		for c := range tables[class].(map[string]any) {
			got = append(got, c)
		}
		sort.Strings(got)
		if s := strings.Join(got, ""); s != want {
			t.Errorf("%s: got %q, want %q", class, s, want)
		}
	}
}

// The queue policy checks queue name parts against this table instead of the
// regex: configs.QueueNameRegExp ^[a-zA-Z0-9_:#/@-]{1,64}$.
func TestQueueNameTableIsTheQueueNameRegExp(t *testing.T) {
	var got []string
	for c := range queueNameTable() {
		got = append(got, c)
	}
	sort.Strings(got)
	if s, want := strings.Join(got, ""), "#-/0123456789:@ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"; s != want {
		t.Errorf("got %q, want %q", s, want)
	}
}
