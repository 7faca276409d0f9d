// Command progress runs `go test -json …` and prints what a person waiting
// for it wants to see, as it happens: a line per package when it ends, a
// line per top-level test that took a while (so a package that runs for
// minutes is not silent), and the whole output of every test that failed.
// It exits with the command's status, or 1 if a test failed while the
// command claimed success.
//
//	go run ./tests/progress [-slow 10s] -- go test -json ./...
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

func main() {
	slow := flag.Duration("slow", 10*time.Second, "print a top-level test that passed when it took at least `d`")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: progress [-slow d] -- go test -json [flags] [packages]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "progress:", err)
		os.Exit(1)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "progress:", err)
		os.Exit(1)
	}
	p := newPrinter(os.Stdout, *slow)
	p.read(out)
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		os.Exit(exit.ExitCode())
	case err != nil:
		fmt.Fprintln(os.Stderr, "progress:", err)
		os.Exit(1)
	case p.failed:
		os.Exit(1)
	}
}

// event is a line of `go test -json` (cmd/test2json).
type event struct {
	Action, Package, Test, Output string
	ImportPath                    string // of a build's events
	Elapsed                       float64
}

type printer struct {
	w      io.Writer
	slow   time.Duration
	failed bool
	// output holds each running test's lines (and a package's own, under
	// the empty test name) until it ends: printed only if it fails.
	output map[[2]string][]string
}

func newPrinter(w io.Writer, slow time.Duration) *printer {
	return &printer{w: w, slow: slow, output: map[[2]string][]string{}}
}

func (p *printer) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(p.w, "%s\n", line) // not an event: a build error and the like
			continue
		}
		p.event(e)
	}
}

func (p *printer) event(e event) {
	top, _, sub := strings.Cut(e.Test, "/")
	key := [2]string{e.Package, top} // a subtest's lines go with its test's
	switch e.Action {
	case "build-output":
		k := [2]string{"build", e.ImportPath}
		p.output[k] = append(p.output[k], e.Output)
	case "build-fail":
		// The compiler's messages; the package's own fail event follows.
		p.failed = true
		k := [2]string{"build", e.ImportPath}
		for _, l := range p.output[k] {
			fmt.Fprint(p.w, l)
		}
		delete(p.output, k)
	case "output":
		p.output[key] = append(p.output[key], e.Output)
	case "pass", "skip":
		if !sub {
			delete(p.output, key)
		}
		switch {
		case e.Test == "" && e.Action == "pass":
			fmt.Fprintf(p.w, "ok    %s\t%.1fs\n", e.Package, e.Elapsed)
		case e.Test == "":
			fmt.Fprintf(p.w, "?     %s\t[no test files]\n", e.Package)
		case !sub && e.Action == "pass" && e.Elapsed >= p.slow.Seconds():
			fmt.Fprintf(p.w, "      %s %s\t%.1fs\n", e.Package, e.Test, e.Elapsed)
		}
	case "fail":
		p.failed = true
		if e.Test == "" {
			// Whatever the package printed outside its tests (a panic,
			// a timeout, a build error) comes with it.
			for _, l := range p.output[key] {
				fmt.Fprint(p.w, l)
			}
			delete(p.output, key)
			fmt.Fprintf(p.w, "FAIL  %s\t%.1fs\n", e.Package, e.Elapsed)
			return
		}
		if sub {
			return // printed with its top-level test, whose output holds it
		}
		for _, l := range p.output[key] {
			fmt.Fprint(p.w, l)
		}
		delete(p.output, key)
		fmt.Fprintf(p.w, "--- FAIL: %s %s (%.1fs)\n", e.Package, e.Test, e.Elapsed)
	}
}
