package shim

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
)

// TestQueueCorpusAgainstYuniKorn puts every corpus case of the queue
// decision (yunikorn/admission/queue) through the admission controller,
// the k8shim's application metadata and the core's placement, and to
// aclc's QueueReview as this release.
func TestQueueCorpusAgainstYuniKorn(t *testing.T) {
	rel, err := release.Lookup(Release())
	if err != nil {
		t.Fatalf("yunikorn-k8shim %q: %v", Release(), err)
	}
	cases, read, skipped := admissionCorpus(t, "yunikorn/admission/queue")
	compared := 0
	var failures []string
	for _, c := range cases {
		yk, ac, why := decideQueue(rel, queueInput{source: c.source, namespaces: c.namespaces, review: c.review})
		if why != "" {
			skipped[why]++
			continue
		}
		compared++
		if ok, what := SameQueue(yk, ac); !ok {
			if k := knownQueue(rel, yk, ac); k != "" {
				skipped["documented: "+k]++
				continue
			}
			failures = append(failures, fmt.Sprintf("%s: %s differs\n  YuniKorn %s: %s\n  aclc:          %s", c.name, what, rel.Name(), yk, ac))
		}
	}
	for _, f := range failures {
		t.Error(f)
	}
	if compared == 0 {
		t.Fatal("no queue corpus case compared")
	}
	t.Logf("release %s: %d queue corpus cases read, %d compared, not compared: %v", rel.Name(), read, compared, skipped)
	report(t, "queue-corpus", read, compared, len(failures))
}

// TestDrawnPodsAgainstYuniKorn draws admission settings, namespaces and
// pods (queue and application id in each of their forms, the username
// label, user.info, the scheduler name, owners, bound pods, workloads) and
// puts each through YuniKorn end to end and to aclc. ACLC_ORACLE_SHIM_N
// sets how many (default 150), ACLC_ORACLE_SEED replays a run. The first
// five disagreements of each kind are shrunk (shrinkDraw) and printed as
// corpus cases. With
// ACLC_ORACLE_SHIM_CASES, each user.info review decided is written there
// with the controller's answer.
func TestDrawnPodsAgainstYuniKorn(t *testing.T) {
	rel, err := release.Lookup(Release())
	if err != nil {
		t.Fatalf("yunikorn-k8shim %q: %v", Release(), err)
	}
	n, seed := drawn(t, 150)
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	compared, skipped, scheduled, rejected := 0, map[string]int{}, 0, 0
	reviewed, reviewSkipped := 0, map[string]int{}
	var failures, reviewFailures []string
	cw := openCases(t)
	for i := range n {
		d := drawPod(r, i)
		in := d.render()
		// The user.info review of the same drawn settings, namespaces and
		// object: the controller's answer and aclc's, verdict, message and
		// the user.info the patch leaves.
		if yr, ar, why := decide(rel, in.source, in.namespaces, in.review); why != "" {
			reviewSkipped[why]++
		} else {
			reviewed++
			cw.write(t, fmt.Sprintf("draw %d (seed %d)", i, seed), in.source, in.namespaces, in.review, yr)
			if !Same(yr, ar) {
				if k := knownDifference(rel, in.review, yr, ar); k != "" {
					reviewSkipped["documented: "+k]++
				} else if len(reviewFailures) < 5 {
					reviewFailures = append(reviewFailures, shrunkReview(rel, d, seed, yr, ar))
				} else {
					reviewFailures = append(reviewFailures, "")
				}
			}
		}
		yk, ac, why := decideQueue(rel, in)
		if why != "" {
			skipped[why]++
			continue
		}
		compared++
		if yk.Scheduled {
			scheduled++
		}
		if !yk.Allowed {
			rejected++
		}
		if ok, what := SameQueue(yk, ac); !ok {
			if k := knownQueue(rel, yk, ac); k != "" {
				skipped["documented: "+k]++
				continue
			}
			if len(failures) < 5 {
				failures = append(failures, shrunkQueue(rel, d, seed, what, yk, ac))
			} else {
				failures = append(failures, "")
			}
		}
	}
	for i, f := range failures {
		if i == 5 {
			t.Errorf("and %d more", len(failures)-5)
			break
		}
		t.Error(f)
	}
	if compared < n/2 {
		t.Fatalf("only %d of %d drawn pods compared: %v", compared, n, skipped)
	}
	t.Logf("release %s: %d drawn pods, %d compared (%d scheduled by YuniKorn, %d rejected), not compared: %v", rel.Name(), n, compared, scheduled, rejected, skipped)
	report(t, "queue-drawn", n, compared, len(failures))
	for i, f := range reviewFailures {
		if i == 5 {
			t.Errorf("and %d more", len(reviewFailures)-5)
			break
		}
		t.Error(f)
	}
	if reviewed < n/2 {
		t.Fatalf("only %d of %d drawn reviews compared: %v", reviewed, n, reviewSkipped)
	}
	t.Logf("release %s: %d drawn user.info reviews, %d compared, not compared: %v", rel.Name(), n, reviewed, reviewSkipped)
	report(t, "admission-drawn", n, reviewed, len(reviewFailures))
}

// drawn is how many to draw (ACLC_ORACLE_SHIM_N, else n) and the seed
// (ACLC_ORACLE_SEED replays a run, else 1).
func drawn(t *testing.T, n int) (int, uint64) {
	t.Helper()
	var err error
	if v := os.Getenv("ACLC_ORACLE_SHIM_N"); v != "" {
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	seed := uint64(1)
	if v := os.Getenv("ACLC_ORACLE_SEED"); v != "" {
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	return n, seed
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// reviewWhat is the first part of the user.info review's answer on which
// yk and ac differ, or "".
func reviewWhat(yk, ac Answer) string {
	switch {
	case yk.Err != ac.Err:
		return "patch"
	case yk.UID != ac.UID:
		return "uid"
	case yk.Allowed != ac.Allowed:
		return "verdict"
	case yk.Message != ac.Message:
		return "message"
	case yk.UserInfo != ac.UserInfo:
		return "user.info"
	case yk.IgnoreApp != ac.IgnoreApp:
		return "ignore-application"
	}
	return ""
}

// shrunkReview shrinks a draw on which the user.info review differs
// (the same part of the answer, not a documented difference) and prints
// the smallest as a corpus case of yunikorn/admission/review.
func shrunkReview(rel release.Version, d podDraw, seed uint64, yk, ac Answer) string {
	what := reviewWhat(yk, ac)
	small := shrinkDraw(d, func(in queueInput) bool {
		y, a, why := decide(rel, in.source, in.namespaces, in.review)
		return why == "" && reviewWhat(y, a) == what && knownDifference(rel, in.review, y, a) == ""
	})
	in := small.render()
	y, a, _ := decide(rel, in.source, in.namespaces, in.review)
	resp := map[string]any{"uid": y.UID, "allowed": y.Allowed}
	if !y.Allowed {
		resp["status"] = map[string]any{"metadata": map[string]any{}, "message": y.Message}
	}
	note := fmt.Sprintf("shrunk draw %d of seed %d: the user.info review's %s differs", d.i, seed, what)
	return fmt.Sprintf("draw %d (seed %d): the user.info review's %s differs; shrunk to the corpus case:\n%s", d.i, seed, what,
		reproducer(note, "yunikorn/admission/review", rel.Name(), in, map[string]any{"response": resp}, y, a))
}

// shrunkQueue shrinks a draw on which the queue decision differs (the
// same part, not a documented difference) and prints the smallest as a
// corpus case of yunikorn/admission/queue.
func shrunkQueue(rel release.Version, d podDraw, seed uint64, what string, yk, ac QueueAnswer) string {
	small := shrinkDraw(d, func(in queueInput) bool {
		y, a, why := decideQueue(rel, in)
		ok, w := SameQueue(y, a)
		return why == "" && !ok && w == what && knownQueue(rel, y, a) == ""
	})
	in := small.render()
	y, a, _ := decideQueue(rel, in)
	var uid struct {
		Request struct {
			UID string `json:"uid"`
		} `json:"request"`
	}
	_ = json.Unmarshal(in.review, &uid)
	// YuniKorn's verdict; a rejection's message is the core's, which the
	// corpus's want quotes after the application's id and before the
	// rules' reasons.
	resp := map[string]any{"uid": uid.Request.UID, "allowed": y.Allowed}
	note := fmt.Sprintf("shrunk draw %d of seed %d: the queue decision's %s differs", d.i, seed, what)
	return fmt.Sprintf("draw %d (seed %d): the queue decision's %s differs; shrunk to the corpus case:\n%s", d.i, seed, what,
		reproducer(note, "yunikorn/admission/queue", rel.Name(), in, map[string]any{"response": resp}, y, a))
}

func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}
