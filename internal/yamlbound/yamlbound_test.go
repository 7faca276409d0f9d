package yamlbound

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestEstimateCountsAtLeastTheNodesOfRealConfiguration pins that the scan
// refuses nothing a decode would keep under the bound: on every example
// and corpus file the estimate is at least the decoded count.
func TestEstimateCountsAtLeastTheNodesOfRealConfiguration(t *testing.T) {
	var files []string
	for _, g := range []string{"../../examples/*/*.yaml", "../../tests/corpus/*/*.yaml"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no example files found")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		real := 0
		for {
			var n yaml.Node
			if dec.Decode(&n) != nil {
				break
			}
			c, _ := Count(&n, 1<<30)
			real += c
		}
		if est := Estimate(data, 1<<30); est < real || est > 10*real+10 {
			t.Errorf("%s: estimate %d, decoded %d", f, est, real)
		}
	}
}

func TestCheckRefusesLargeTextsBeforeDecoding(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		max  int
		ok   bool
	}{
		{"a list of one-letter items over the bound is refused", bytes.Repeat([]byte("- a\n"), 1000), 1000, false},
		{"the same list under the bound passes", bytes.Repeat([]byte("- a\n"), 400), 1000, true},
		{"empty items count", bytes.Repeat([]byte("-\n"), 1001), 1000, false},
		{"a flow list counts its items", append([]byte("["), bytes.Repeat([]byte("a,"), 600)...), 1000, false},
		{"comments count nothing", bytes.Repeat([]byte("# - a - b - c\n"), 1000), 10, true},
		{"a quoted scalar is one node whatever it holds", []byte(`a: "` + strings.Repeat("x, y: [z] - ", 1000) + `"`), 10, true},
		{"a single-quoted scalar with '' inside is one node", []byte(`a: '` + strings.Repeat("it''s, - ", 1000) + `'`), 10, true},
		{"a plain scalar with inner punctuation is one node", []byte("a: " + strings.Repeat("x:y-z?", 1000)), 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check("q.yaml", tc.data, tc.max)
			if tc.ok != (err == nil) {
				t.Fatalf("Check = %v, want ok %v (estimate %d)", err, tc.ok, Estimate(tc.data, 1<<30))
			}
			var e *Error
			if err != nil && (!errors.As(err, &e) || !strings.Contains(err.Error(), "q.yaml: more than 1000 YAML nodes")) {
				t.Errorf("error %q does not name the file and the bound", err)
			}
		})
	}
}

func TestCheckNodeCountsAliasesExpanded(t *testing.T) {
	// Each level refers to the one before ten times: 10^5 nodes from a
	// few lines, the shape of the "billion laughs".
	text := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, l := range []string{"b", "c", "d", "e"} {
		text += l + ": &" + l + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = l
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(text), &n); err != nil {
		t.Fatal(err)
	}
	if err := Check("laughs.yaml", []byte(text), 1000); err != nil {
		t.Fatalf("the text itself is small: %v", err)
	}
	err := CheckNode("laughs.yaml", &n, 1000)
	if err == nil || !strings.Contains(err.Error(), "laughs.yaml: more than 1000 YAML nodes once its aliases are expanded") {
		t.Fatalf("CheckNode = %v", err)
	}
	if err := CheckNode("laughs.yaml", &n, 200_000); err != nil {
		t.Errorf("under the bound: %v", err)
	}
}

func TestCountTakesAnAnchorThatContainsItselfAsOneNode(t *testing.T) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("partitions: &p [*p]\n"), &n); err != nil {
		t.Fatal(err)
	}
	if c, _ := Count(&n, 1000); c > 10 {
		t.Errorf("Count = %d, want the few nodes written", c)
	}
}
