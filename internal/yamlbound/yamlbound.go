// Package yamlbound bounds the size of a YAML document in nodes, before it
// is decoded and while it is turned into structures, so that a short text
// cannot take a decode's memory: a 1 MiB list of one-letter items is a
// quarter of a million nodes, and the YAML library spends some 200 bytes
// on each before aclc sees any.
//
// # Notes
//
// Estimate scans the text without decoding it and counts what starts a
// node: a plain scalar's first character, a quoted scalar, and the
// indicators - ? : , [ {. Comments are skipped; a block scalar's lines are
// counted as if they were YAML, so a ConfigMap holding a queues.yaml counts
// about as many nodes as that queues.yaml. For real configuration the
// estimate is one to three times the nodes the YAML library builds; an
// indicator followed by nothing (an empty node) can make the library build
// up to three nodes for one counted, which the exact Count after decoding
// catches. Count walks a decoded tree and counts an alias as the nodes it
// expands to, as a decode into structures builds them.
package yamlbound

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// MaxNodes is the most nodes aclc decodes from one YAML text: one per byte
// of a 1 MiB ConfigMap, the most the API server stores. The scan counts at
// most one node per byte (the densest text, a flow list of one-letter
// names, is a node every two bytes), so every text a ConfigMap can hold is
// read, and only a larger one (a gzipped value, a source file) or aliases
// that expand beyond it are refused. The YAML library's tree of that many
// nodes is some 150 MB, and grows linearly with the text.
const MaxNodes = 1 << 20

// ErrTooLarge is matched by every *Error.
var ErrTooLarge = errors.New("too many YAML nodes")

// Error is a text over the bound.
type Error struct {
	File string
	Max  int
	// Aliases is set when the count includes the expansion of aliases.
	Aliases bool
}

func (e *Error) Error() string { return e.File + ": " + e.Reason() }

// Reason is the error's text without the file, for a caller that locates
// it its own way.
func (e *Error) Reason() string {
	what := "YAML nodes"
	if e.Aliases {
		what = "YAML nodes once its aliases are expanded"
	}
	return fmt.Sprintf("more than %d %s: larger than aclc reads (the bound on one YAML text)", e.Max, what)
}

func (e *Error) Unwrap() error { return ErrTooLarge }

// Check refuses data, named file in the error, when Estimate finds more
// than max nodes in it.
func Check(file string, data []byte, max int) error {
	if Estimate(data, max) > max {
		return &Error{File: file, Max: max}
	}
	return nil
}

// Estimate counts the nodes data may hold without decoding it, stopping
// once the count is over limit.
func Estimate(data []byte, limit int) int {
	n := 2 // the document and its content
	word := false
	for i := 0; i < len(data) && n <= limit; i++ {
		c := data[i]
		switch c {
		case ' ', '\t', '\r', '\n':
			word = false
			continue
		case '#':
			if !word {
				for i < len(data) && data[i] != '\n' {
					i++
				}
				continue
			}
		case '"', '\'':
			if !word {
				n++
				i = skipQuoted(data, i)
				continue
			}
		case '-', '?', ':':
			if i+1 == len(data) || isBlank(data[i+1]) || isFlow(data[i+1]) {
				n++
				word = false
				continue
			}
		case ',', '[', '{':
			n++
			word = false
			continue
		case ']', '}':
			word = false
			continue
		}
		if !word {
			n++
			word = true
		}
	}
	return n
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
func isFlow(c byte) bool  { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}' }

// skipQuoted returns the index of the quote closing the scalar opened at
// i, or the end of data.
func skipQuoted(data []byte, i int) int {
	q := data[i]
	for j := i + 1; j < len(data); j++ {
		switch {
		case q == '"' && data[j] == '\\':
			j++
		case data[j] == q:
			if q == '\'' && j+1 < len(data) && data[j+1] == '\'' {
				j++ // '' is a quote inside single quotes
				continue
			}
			return j
		}
	}
	return len(data)
}

// Count counts the nodes of a decoded tree, aliases expanded, stopping
// once the count is over limit. expanded is set when an alias added to it.
func Count(n *yaml.Node, limit int) (count int, expanded bool) {
	c := counter{limit: limit, sizes: map[*yaml.Node]int{}, open: map[*yaml.Node]bool{}}
	c.walk(n, 0)
	return c.total, c.aliases
}

// CheckNode refuses a decoded tree of more than max nodes, aliases
// expanded.
func CheckNode(file string, n *yaml.Node, max int) error {
	if count, expanded := Count(n, max); count > max {
		return &Error{File: file, Max: max, Aliases: expanded}
	}
	return nil
}

type counter struct {
	limit   int
	total   int
	aliases bool
	sizes   map[*yaml.Node]int // the expanded size of an anchored node
	// open are the anchored nodes being walked: an alias to one of them is
	// an anchor that contains itself, which the decode refuses, so it
	// counts as one node.
	open map[*yaml.Node]bool
}

// walk returns the size of n with aliases expanded; it gives up as soon
// as the total passes the limit.
func (c *counter) walk(n *yaml.Node, depth int) int {
	if n == nil || c.total > c.limit {
		return 0
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil && c.open[n.Alias] {
		c.total++
		return 1
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		size, ok := c.sizes[n.Alias]
		if !ok {
			if depth > 1000 {
				c.total = c.limit + 1
				return c.total
			}
			before := c.total
			c.walk(n.Alias, depth+1)
			size = c.total - before
			c.total = before
			c.sizes[n.Alias] = size
		}
		c.aliases = true
		c.total += size
		return size
	}
	if n.Anchor != "" {
		c.open[n] = true
		defer delete(c.open, n)
	}
	before := c.total
	c.total++
	for _, k := range n.Content {
		c.walk(k, depth+1)
		if c.total > c.limit {
			break
		}
	}
	return c.total - before
}
