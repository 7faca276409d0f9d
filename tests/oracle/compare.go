// Package oracle puts YuniKorn itself beside aclc: the same configuration
// and the same requests go to YuniKorn's own code (package core, built
// from one release's modules) and to aclc's reference (pkg/acl) deciding
// as that release, and every verdict, queue and message must agree.
package oracle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/pkg/acl/yunikorn"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/tests/oracle/core"
)

// Request is one question asked of both sides about a configuration: a
// queue decision (Action submit or admin) or a placement (Action place).
type Request struct {
	Partition string            `yaml:"partition,omitempty" json:"partition,omitempty"`
	Action    string            `yaml:"action" json:"action"`
	Queue     string            `yaml:"queue,omitempty" json:"queue,omitempty"`
	User      string            `yaml:"user,omitempty" json:"user,omitempty"`
	Groups    []string          `yaml:"groups,omitempty" json:"groups,omitempty"`
	Forced    bool              `yaml:"forced,omitempty" json:"forced,omitempty"`
	Tags      map[string]string `yaml:"tags,omitempty" json:"tags,omitempty"`
}

// Place is the action of a placement request.
const Place = "place"

// Outcome is what one side answered.
type Outcome struct {
	// Kind is "config" (the configuration's verdict), "access" or
	// "place"; Skip is set when the request has no counterpart on
	// YuniKorn's side (a queue decision on a queue the configuration does
	// not hold).
	Allow   bool
	Queue   string
	Message string
	Skip    bool
}

func (o Outcome) String() string {
	if o.Allow {
		if o.Queue != "" {
			return "allow " + o.Queue
		}
		return "allow"
	}
	return fmt.Sprintf("deny %q", o.Message)
}

// Diff is one disagreement between YuniKorn and aclc.
type Diff struct {
	What           string // "config", "submit", "admin", "place"
	YuniKorn, ACLC Outcome
	Config         string
	Request        *Request
	Release        string
	MessageOnly    bool // the verdicts agree, the messages do not
	Note           string
	// Engine is the aclc engine that answered ACLC: "" for the native
	// reference, else rego, wasm, opa-wasm or http.
	Engine string
}

func (d Diff) String() string {
	var b strings.Builder
	who := "aclc"
	if d.Engine != "" {
		who = "aclc's " + d.Engine + " engine"
	}
	fmt.Fprintf(&b, "YuniKorn %s and %s disagree on %s\n", d.Release, who, d.What)
	fmt.Fprintf(&b, "  YuniKorn: %s\n  aclc:     %s\n", d.YuniKorn, d.ACLC)
	if d.Request != nil {
		r, _ := yaml.Marshal(d.Request)
		fmt.Fprintf(&b, "  request:\n%s", indent(string(r), "    "))
	}
	fmt.Fprintf(&b, "  configuration:\n%s", indent(d.Config, "    "))
	return b.String()
}

func indent(s, p string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = p + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

// Result counts one comparison.
type Result struct {
	Compared, Skipped int
	// EngineCompared counts, per engine besides native, the requests it
	// decided beside YuniKorn.
	EngineCompared map[string]int
	Diffs          []Diff
	// Decided are the requests YuniKorn decided, with its answers.
	Decided []Decided
}

// Decided is one request and YuniKorn's answer to it.
type Decided struct {
	Request  Request
	YuniKorn Outcome
}

// Compare loads the configuration on both sides and asks both every
// request, returning each disagreement.
func Compare(rel release.Version, config []byte, reqs []Request) Result {
	return CompareOn(rel, config, reqs, nil)
}

// CompareOn is Compare that also asks each of eng's engines (nil: none)
// every request YuniKorn decided, over bundles built for the
// configuration as rel: each engine's verdict, queue and message must be
// YuniKorn's.
func CompareOn(rel release.Version, config []byte, reqs []Request, eng *Engines) Result {
	var res Result
	ykCluster, ykErr := safeNew(config)
	conf, aErr := yunikorn.LoadAs("queues.yaml", config, rel)
	var tree *yunikorn.QueueTree
	if aErr == nil {
		tree, aErr = yunikorn.BuildTree("queues.yaml", conf)
	}
	res.Compared++
	if (ykErr == nil) != (aErr == nil) || (ykErr != nil && !sameConfigMessage(ykErr, aErr)) {
		d := Diff{What: "config", Config: string(config), Release: rel.Name()}
		d.YuniKorn = Outcome{Allow: ykErr == nil, Message: errText(ykErr)}
		d.ACLC = Outcome{Allow: aErr == nil, Message: errText(aErr)}
		d.MessageOnly = (ykErr == nil) == (aErr == nil)
		res.Diffs = append(res.Diffs, d)
	}
	if ykErr != nil || aErr != nil {
		return res
	}
	ctx := context.Background()
	var engines []engine.Engine
	if eng != nil {
		var closeAll func()
		var err error
		engines, closeAll, err = eng.Open(ctx, config)
		if err != nil {
			// The core and aclc's reference took the configuration; the
			// bundles must be built from it too.
			res.Diffs = append(res.Diffs, Diff{What: "config", Engine: strings.Join(eng.Names(), ","), Config: string(config), Release: rel.Name(),
				YuniKorn: Outcome{Allow: true}, ACLC: Outcome{Message: err.Error()}})
			return res
		}
		defer closeAll()
		res.EngineCompared = map[string]int{}
	}
	for i := range reqs {
		r := &reqs[i]
		y, a := decide(rel, config, ykCluster, tree, r)
		if y.Skip {
			res.Skipped++
			continue
		}
		res.Compared++
		res.Decided = append(res.Decided, Decided{Request: *r, YuniKorn: y})
		if d, ok := differ(rel, config, r, y, a, ""); ok {
			res.Diffs = append(res.Diffs, d)
		}
		for _, e := range engines {
			res.EngineCompared[e.Name()]++
			a := engineOutcome(ctx, e, r)
			if r.Action != Place && y.Message == "" {
				// As for the native engine: YuniKorn answers a bare
				// boolean, so only the verdict is compared.
				a.Message = ""
			}
			if d, ok := differ(rel, config, r, y, a, e.Name()); ok {
				res.Diffs = append(res.Diffs, d)
			}
		}
	}
	return res
}

// differ is the disagreement between YuniKorn's answer y and an aclc
// engine's a, if any.
func differ(rel release.Version, config []byte, r *Request, y, a Outcome, engine string) (Diff, bool) {
	if strings.HasPrefix(y.Message, "panic: ") && strings.HasPrefix(a.Message, "panic: ") {
		// Both crash; the texts are runtime errors.
		a.Message = y.Message
	}
	if y.Allow == a.Allow && y.Queue == a.Queue && y.Message == a.Message {
		return Diff{}, false
	}
	return Diff{What: r.Action, YuniKorn: y, ACLC: a, Config: string(config), Request: r, Release: rel.Name(),
		MessageOnly: y.Allow == a.Allow && y.Queue == a.Queue, Engine: engine}, true
}

// decide asks both sides one request.
func decide(rel release.Version, config []byte, c *core.Cluster, tree *yunikorn.QueueTree, r *Request) (yk, ac Outcome) {
	if r.Action == Place {
		// A fresh core per placement: an earlier placement's dynamic
		// queues would be state aclc's stateless decision does not see.
		fresh, err := safeNew(config)
		if err != nil {
			return Outcome{Message: "core refused the configuration on reload: " + err.Error()}, Outcome{}
		}
		app := core.App{Partition: r.Partition, ID: "app-1", Queue: r.Queue, UGI: core.UGI{User: r.User, Groups: r.Groups}, Tags: r.Tags}
		q, msg, panicked := safePlace(fresh, app)
		p := tree.Place(yunikorn.PlacementInput{Partition: r.Partition, Application: yunikorn.Application{ID: "app-1", Queue: r.Queue, User: r.User, Groups: r.Groups, Tags: r.Tags}}, yunikorn.NoResolver{})
		if panicked != "" {
			yk = Outcome{Message: "panic: " + panicked}
		} else {
			yk = Outcome{Allow: msg == "", Queue: q, Message: msg}
		}
		ac = Outcome{Allow: p.Allow, Queue: p.Queue, Message: p.Message}
		if p.Panic != "" {
			ac.Message = "panic: " + p.Panic
		}
		if yk.Message != "" && strings.HasPrefix(yk.Message, "panic: ") && ac.Message != "" && strings.HasPrefix(ac.Message, "panic: ") {
			// Both crash; the texts are runtime errors.
			ac.Message = yk.Message
		}
		return yk, ac
	}
	allow, found, err := c.Access(r.Partition, r.Queue, r.Action, core.UGI{User: r.User, Groups: r.Groups}, r.Forced)
	d := tree.Decide(yunikorn.Input{Partition: r.Partition, Queue: r.Queue, Action: r.Action, User: r.User, Groups: r.Groups, Forced: r.Forced}, yunikorn.NoResolver{})
	if err != nil {
		yk = Outcome{Message: err.Error()}
		ac = Outcome{Allow: d.Allow, Message: d.Reason}
		return yk, ac
	}
	if !found {
		return Outcome{Skip: true}, Outcome{}
	}
	// aclc's reason for a queue decision is its own explanation; YuniKorn
	// answers a bare boolean, so only the verdict is compared.
	return Outcome{Allow: allow}, Outcome{Allow: d.Allow}
}

func safeNew(config []byte) (c *core.Cluster, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return core.New(config)
}

func safePlace(c *core.Cluster, a core.App) (q, msg, panicked string) {
	defer func() {
		if p := recover(); p != nil {
			panicked = fmt.Sprint(p)
		}
	}()
	q, msg = c.Place(a)
	return q, msg, ""
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// sameConfigMessage: YuniKorn's refusal must be one of aclc's located
// errors' messages (aclc adds file, line and column around it).
func sameConfigMessage(yk, ac error) bool {
	want := strings.TrimSpace(yk.Error())
	for _, m := range messages(ac) {
		if m == want {
			return true
		}
	}
	return false
}

func messages(err error) []string {
	var one *yunikorn.SourceError
	var many yunikorn.SourceErrors
	switch {
	case errors.As(err, &many):
		var out []string
		for _, e := range many {
			out = append(out, e.Msg)
		}
		return out
	case errors.As(err, &one):
		return []string{one.Msg}
	}
	return []string{err.Error()}
}

var _ = slices.Contains[[]string]
