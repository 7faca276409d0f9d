// Command oraclesample picks a bounded sample of a file of user.info
// reviews the shim oracle wrote (tests/oracle/shim, ACLC_ORACLE_SHIM_CASES)
// for testdata/oracle-userinfo-cases.jsonl: the first case of each kind of
// answer (the kind and operation of the review, the verdict, the message,
// the places user.info is left at, the ignore-application mark), in the
// file's order, at most -n of the corpus's cases and -n of the drawn ones.
//
//	go run ./cmd/oraclesample -n 30 < cases.jsonl > testdata/oracle-userinfo-cases.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
)

func main() {
	n := flag.Int("n", 16, "the most drawn cases to keep")
	perFile := flag.Int("per-file", 3, "the most cases to keep of each corpus file")
	flag.Parse()
	if err := run(*n, *perFile); err != nil {
		fmt.Fprintln(os.Stderr, "oraclesample:", err)
		os.Exit(1)
	}
}

func run(n, perFile int) error {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	seen := map[string]bool{}
	kept := map[string]int{}
	for line := 1; sc.Scan(); line++ {
		var c struct {
			Case   string `json:"case"`
			Review struct {
				Request struct {
					Kind      struct{ Kind string } `json:"kind"`
					Operation string                `json:"operation"`
				} `json:"request"`
			} `json:"review"`
			YuniKorn struct {
				Allowed           bool              `json:"allowed"`
				Message           string            `json:"message"`
				UserInfo          map[string]string `json:"userInfo"`
				IgnoreApplication bool              `json:"ignoreApplication"`
			} `json:"yunikorn"`
		}
		// A review that is not an object still has a kind of answer.
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			var loose struct {
				YuniKorn json.RawMessage `json:"yunikorn"`
			}
			if err := json.Unmarshal(sc.Bytes(), &loose); err != nil {
				return fmt.Errorf("line %d: %v", line, err)
			}
		}
		var places []string
		for p := range c.YuniKorn.UserInfo {
			places = append(places, p)
		}
		sort.Strings(places)
		file, _, _ := strings.Cut(c.Case, "#")
		limit := perFile
		if strings.HasPrefix(c.Case, "draw ") {
			file, limit = "draw", n
		}
		if kept[file] == limit {
			continue
		}
		words := strings.Fields(c.YuniKorn.Message)
		words = words[:min(len(words), 3)]
		key := fmt.Sprintf("%s %s %s %t %q %s %t", file, c.Review.Request.Kind.Kind, c.Review.Request.Operation, c.YuniKorn.Allowed,
			words, strings.Join(places, ","), c.YuniKorn.IgnoreApplication)
		if seen[key] {
			continue
		}
		seen[key] = true
		kept[file]++
		if _, err := fmt.Println(sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}
