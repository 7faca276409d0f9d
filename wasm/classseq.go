package wasm

import (
	"regexp/syntax"
	"unicode/utf8"
)

// classSeq matches the expressions policies check names with, such as
// YuniKorn's user and queue name rules (^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$):
// anchored at both ends, a sequence of ASCII character classes, each once,
// optional or repeated. Go's regexp takes a few hundred nanoseconds for a
// short name, most of it setting up its machine; a pass over the bytes with
// the set of reachable positions as a bit mask takes a few.
//
// It decides exactly as Go's regexp: a byte outside ASCII is in no class,
// as the rune it starts is in none, and a string that is not valid UTF-8
// matches nothing either way, for the same reason.
//
// Bit i of a set of positions is "before element i"; bit n, after the last
// element, is a match.
type classSeq struct {
	elems []seqElem
	// take is, per ASCII byte, the positions whose element takes it; rep
	// and skip the positions of repeated and optional elements.
	take      [utf8.RuneSelf]uint64
	rep, skip uint64
	// start is the positions reachable before any byte: 0 and every
	// position after optional elements at the front.
	start uint64
}

type seqElem struct {
	set  [2]uint64 // the ASCII bytes the element takes
	rep  bool      // repeated (x*): stays at its position after a byte
	skip bool      // optional (x? or x*): its position also reaches the next
}

// maxSeqElems bounds the elements: positions 0..n fit a uint64.
const maxSeqElems = 62

// newClassSeq returns the matcher of pattern, or nil when pattern is not of
// that shape (or does not parse): Go's regexp decides it then.
func newClassSeq(pattern string) *classSeq {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	re = re.Simplify()
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[0].Op != syntax.OpBeginText || re.Sub[len(re.Sub)-1].Op != syntax.OpEndText {
		return nil
	}
	var s classSeq
	for _, sub := range re.Sub[1 : len(re.Sub)-1] {
		if !s.add(sub) || len(s.elems) > maxSeqElems {
			return nil
		}
	}
	for i, e := range s.elems {
		for c := range utf8.RuneSelf {
			if e.set[c>>6]&(1<<(c&63)) != 0 {
				s.take[c] |= 1 << i
			}
		}
		if e.rep {
			s.rep |= 1 << i
		}
		if e.skip {
			s.skip |= 1 << i
		}
	}
	s.start = s.closure(1)
	return &s
}

// add appends the elements of one part of the sequence: a class or a
// literal, once, optional (x?), repeated (x*) or at least once (x+, as x
// then x*), or a sequence of those.
func (s *classSeq) add(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpConcat: // x{2} simplified
		for _, sub := range re.Sub {
			if !s.add(sub) {
				return false
			}
		}
		return true
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return false
		}
		for _, r := range re.Rune {
			e, ok := asciiElem([]rune{r, r})
			if !ok {
				return false
			}
			s.elems = append(s.elems, e)
		}
		return true
	case syntax.OpCharClass:
		e, ok := asciiElem(re.Rune)
		if ok {
			s.elems = append(s.elems, e)
		}
		return ok
	case syntax.OpQuest, syntax.OpStar, syntax.OpPlus:
		// Greediness does not change whether a string matches.
		if len(re.Sub) != 1 {
			return false
		}
		var e seqElem
		var ok bool
		switch sub := re.Sub[0]; sub.Op {
		case syntax.OpCharClass:
			e, ok = asciiElem(sub.Rune)
		case syntax.OpLiteral:
			if len(sub.Rune) == 1 && sub.Flags&syntax.FoldCase == 0 {
				e, ok = asciiElem([]rune{sub.Rune[0], sub.Rune[0]})
			}
		}
		if !ok {
			return false
		}
		if re.Op == syntax.OpPlus {
			s.elems = append(s.elems, e)
		}
		e.skip = true
		e.rep = re.Op != syntax.OpQuest
		s.elems = append(s.elems, e)
		return true
	}
	return false
}

// asciiElem is the element of a class given as rune ranges (lo, hi pairs),
// when every rune of it is ASCII.
func asciiElem(ranges []rune) (seqElem, bool) {
	var e seqElem
	if len(ranges) == 0 || len(ranges)%2 != 0 {
		return e, false
	}
	for i := 0; i < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo < 0 || hi >= utf8.RuneSelf || lo > hi {
			return e, false
		}
		for r := lo; r <= hi; r++ {
			e.set[r>>6] |= 1 << (r & 63)
		}
	}
	return e, true
}

// closure adds to the positions in mask those that optional elements let
// it reach without a byte.
func (s *classSeq) closure(mask uint64) uint64 {
	for {
		next := mask | (mask&s.skip)<<1
		if next == mask {
			return mask
		}
		mask = next
	}
}

// match reports whether the whole of b matches.
func (s *classSeq) match(b []byte) bool {
	mask := s.start
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
		t := mask & s.take[c]
		if t == 0 {
			return false
		}
		mask = s.closure(t<<1 | t&s.rep)
	}
	return mask&(1<<len(s.elems)) != 0
}
