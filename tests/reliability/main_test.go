package main

import "testing"

func TestReplaceSectionsKeepsTheOthersAndAppendsNewOnes(t *testing.T) {
	old := "# R\n\nhead\n\n## A\n\na1\n\n## B\n\nb1\n\n## C\n\nc1\n"
	fresh := "# R\n\nnew head\n\n## B\n\nb2\n\n## D\n\nd2\n"
	want := "# R\n\nhead\n\n## A\n\na1\n\n## B\n\nb2\n\n## C\n\nc1\n\n## D\n\nd2\n"
	if got := replaceSections(old, fresh); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestLeastSquaresRecoversAnExactRule(t *testing.T) {
	// peak = 100 + k·(5 + t·2)
	var pts [][4]float64
	for _, q := range []float64{1, 5, 20} {
		for _, th := range []float64{1, 8, 64} {
			pts = append(pts, [4]float64{1, q, q * th, 100 + q*(5+th*2)})
		}
	}
	c, err := leastSquares(pts)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{100, 5, 2} {
		if d := c[i] - want; d > 1e-6 || d < -1e-6 {
			t.Errorf("coefficient %d = %v, want %v", i, c[i], want)
		}
	}
	if _, err := leastSquares([][4]float64{{1, 5, 5, 1}, {1, 5, 10, 2}}); err == nil {
		t.Error("one configuration size determined the rule, want an error")
	}
}
