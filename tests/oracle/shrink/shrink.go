// Package shrink makes a failing input minimal, for the oracle's drawn
// inputs (tests/oracle's configurations and requests, tests/oracle/shim's
// settings, namespaces and objects): it takes a step to a smaller input as
// long as the failure persists.
package shrink

// Greedy returns x made as small as the steps allow while still holds:
// it tries the inputs one step smaller than x (smaller(x)) in order, moves
// to the first one for which still holds, and starts again from there,
// until no step keeps still. still(x) is taken to hold for the x given.
// Each step must make the input smaller by some measure, so that the
// search ends.
func Greedy[T any](x T, smaller func(T) []T, still func(T) bool) T {
	for {
		moved := false
		for _, c := range smaller(x) {
			if still(c) {
				x, moved = c, true
				break
			}
		}
		if !moved {
			return x
		}
	}
}
