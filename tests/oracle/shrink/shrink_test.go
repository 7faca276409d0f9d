package shrink

import (
	"slices"
	"testing"
)

// dropOne are the slices one element shorter than xs.
func dropOne(xs []int) [][]int {
	var out [][]int
	for i := range xs {
		out = append(out, slices.Delete(slices.Clone(xs), i, i+1))
	}
	return out
}

// TestGreedyKeepsWhatTheFailureNeeds: a failure that needs 3 and 7 is
// shrunk to exactly those, from any order, and an input already minimal
// is left as it is.
func TestGreedyKeepsWhatTheFailureNeeds(t *testing.T) {
	still := func(xs []int) bool { return slices.Contains(xs, 3) && slices.Contains(xs, 7) }
	for _, in := range [][]int{{1, 2, 3, 4, 5, 6, 7, 8}, {7, 9, 9, 3}, {3, 7}} {
		got := Greedy(in, dropOne, still)
		slices.Sort(got)
		if !slices.Equal(got, []int{3, 7}) {
			t.Errorf("%v shrinks to %v, want [3 7]", in, got)
		}
	}
}

// TestGreedyStopsWhenNothingHolds: no step keeps the failure, so the
// input is returned unchanged and every step was tried once.
func TestGreedyStopsWhenNothingHolds(t *testing.T) {
	tried := 0
	got := Greedy([]int{1, 2, 3}, dropOne, func([]int) bool { tried++; return false })
	if !slices.Equal(got, []int{1, 2, 3}) || tried != 3 {
		t.Errorf("got %v after %d tries, want [1 2 3] after 3", got, tried)
	}
}
