package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/eval"
	"github.com/aclc-dev/aclc/pkg/feed"
	"github.com/aclc-dev/aclc/pkg/translate"
)

const evalExamples = `  echo '{"queue":"root.test","action":"submit","user":"sue"}' |
    aclc eval --engine native -e yunikorn/queues/decision examples/yunikorn/acl-doc.yaml
  aclc eval --engine rego -e yunikorn/queues/decision -i in.json examples/yunikorn/org.yaml
  aclc eval --jsonl -e yunikorn/queues/decision -b queues.tar.gz < inputs.jsonl
  aclc eval --engine http --url http://127.0.0.1:8181 -e yunikorn/queues/decision -i in.json
  # in a script: exit 1 unless sue may submit
  aclc eval --fail -e yunikorn/queues/decision -i in.json examples/yunikorn/acl-doc.yaml

--engine defaults to the bundle's kind with --bundle (wasm when it holds
policy.wasm, else rego), to http with --url, else to wasm. --fail exits 1
when a decision denies (allow, or an admission review's response.allowed, is
false) or is undefined; --fail-defined exits 1 when a decision allows. Unlike
opa eval --fail, which fails only an undefined result, a denial fails here:
an aclc decision is always defined, a denial included ({"allow": false}).
`

// evalOptions are eval's flags.
type evalOptions struct {
	*commandLine
	engine, url, entrypoint, resolver, input, bundle, kind string
	jsonl, fail, failDefined                               bool
	cluster                                                *clusterFlags
}

func evalFlags(fs *pflag.FlagSet, o *evalOptions) {
	engineFlag(fs, &o.engine, "")
	fs.StringVar(&o.url, "url", "", "base URL of an OPA-compatible server (engine http)")
	fs.StringVarP(&o.entrypoint, "entrypoint", "e", "", "decision entrypoint, e.g. yunikorn/queues/decision")
	resolverFlag(fs, &o.resolver)
	fs.StringVarP(&o.input, "input", "i", "-", "input file (JSON), or - for standard input")
	fs.BoolVar(&o.jsonl, "jsonl", false, "read one JSON input per line and write one compact decision per line")
	bundleFlag(fs, &o.bundle)
	fs.BoolVar(&o.fail, "fail", false, "exit 1 when a decision denies or is undefined")
	fs.BoolVar(&o.failDefined, "fail-defined", false, "exit 1 when a decision allows")
	kindFlag(fs, &o.kind, o.commandLine)
	o.cluster = registerClusterFlags(fs, o.commandLine)
}

func newEvalCommand(cl *commandLine) *cobra.Command {
	o := &evalOptions{commandLine: cl}
	cmd := newCommand("eval [--engine native|rego|wasm|opa-wasm|http] [--url URL] -e E [--resolver R] [-i FILE|-] [--jsonl] [--fail | --fail-defined] (SOURCE... | -b FILE)",
		"evaluate a decision on one of the engines", evalExamples, o.run)
	evalFlags(cmd.Flags(), o)
	registerCompletions(cmd)
	return cmd
}

func (o *evalOptions) run(cmd *cobra.Command, srcs []string) int {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := o.cluster.check(cmd.Flags(), o.bundle, o.engine); err != nil {
		return usageErr(cmd, "%v", err)
	}
	switch {
	case o.entrypoint == "":
		return usageErr(cmd, "--entrypoint is required")
	case o.fail && o.failDefined:
		return usageErr(cmd, "give --fail or --fail-defined, not both")
	case o.input == "-" && (o.bundle == "-" || slices.Contains(srcs, "-")):
		return usageErr(cmd, "standard input is read once: give --input FILE when the SOURCE or --bundle is -")
	}
	name := o.engine
	if name == "" && o.url != "" {
		name = engine.HTTP
	}
	if (len(srcs) == 0) == (o.bundle == "") && name != engine.HTTP && !o.cluster.enabled {
		return usageErr(cmd, "give either SOURCE files or --bundle")
	}
	ctx := context.Background()
	eng, err := o.cluster.openEngine(ctx, name, o.url, srcs, o.bundle, translate.Kind(o.kind), o.resolver)
	if err == nil {
		defer eng.Close(ctx)
		return o.eval(ctx, eng, stdout, stderr)
	}
	if errors.Is(err, errUsage) {
		return usageErr(cmd, "%v", strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
	}
	errorf(stderr, "%v", err)
	return exitError
}

func (o *evalOptions) eval(ctx context.Context, eng engine.Engine, stdout, stderr io.Writer) int {
	in, err := o.openInput(o.input)
	if err != nil {
		errorf(stderr, "%v", err)
		return exitError
	}
	defer in.Close()
	verdicts := eval.Verdicts{}
	if o.jsonl {
		failed, err := eval.Lines(ctx, eng, o.entrypoint, in, stdout, &verdicts)
		switch {
		case err != nil:
			errorf(stderr, "%v", err)
			return exitError
		case failed:
			return exitError
		}
		return o.failStatus(verdicts)
	}
	raw, err := io.ReadAll(in)
	if err != nil {
		errorf(stderr, "read input: %v", err)
		return exitError
	}
	if err := eval.CheckInput(o.entrypoint, raw); err != nil {
		name := o.input
		if name == "-" {
			name = stdinName
		}
		errorf(stderr, "%s: %v", name, err)
		return exitError
	}
	out, err := eng.Eval(ctx, o.entrypoint, raw)
	if err != nil {
		errorf(stderr, "%v", err)
		if errors.Is(err, engine.ErrUnknownEntrypoint) {
			return exitUsage
		}
		return exitError
	}
	verdicts.Add(out)
	var pretty bytes.Buffer
	if json.Indent(&pretty, eval.Canonical(out), "", "  ") != nil {
		pretty.Reset()
		pretty.Write(out)
	}
	fmt.Fprintln(stdout, pretty.String())
	return o.failStatus(verdicts)
}

func (o *evalOptions) failStatus(v eval.Verdicts) int {
	switch {
	case o.fail && v.Denied > 0:
		return exitError
	case o.failDefined && v.Allowed > 0:
		return exitError
	}
	return exitOK
}

// errUsage is matched by an error the command line made: a usage error
// (exit 2), the feed's among them.
var errUsage = feed.ErrUsage

// engineSource is what an engine is opened on: loaded sources, or a
// bundle read from a file.
type engineSource struct {
	sources    *translate.Sources
	bundle     *bundle.Bundle
	bundleName string
}

// defaultEngine follows the bundle: wasm when it holds policy.wasm, rego
// when it is plain Rego; sources default to wasm.
func (f engineSource) defaultEngine() string {
	if f.bundle != nil && len(f.bundle.WasmModules) == 0 {
		return engine.Rego
	}
	return engine.Wasm
}

// openFrom loads the SOURCE files or the --bundle file an engine is
// opened on; the http engine needs neither.
func (cl *commandLine) openFrom(srcs []string, bundlePath string, kind translate.Kind, resolver, engineName string) (engineSource, error) {
	switch {
	case engineName == engine.HTTP:
		if len(srcs) > 0 || bundlePath != "" {
			return engineSource{}, fmt.Errorf("%w: --engine http asks the server at --url; it takes no SOURCE or --bundle", errUsage)
		}
		return engineSource{}, nil
	case bundlePath != "":
		if engineName == engine.Native {
			return engineSource{}, fmt.Errorf("%w: the native engine reads SOURCE files, not a bundle", errUsage)
		}
		b, err := cl.readBundleFile(bundlePath)
		name := bundlePath
		if bundlePath == "-" {
			name = stdinName
		}
		return engineSource{bundle: b, bundleName: name}, err
	}
	s, err := cl.loadSources(srcs, kind, resolver, false)
	return engineSource{sources: s}, err
}

// openEngine builds the named engine on loaded sources or a bundle.
func openEngine(ctx context.Context, name, url string, from engineSource, resolver string) (engine.Engine, error) {
	switch name {
	case engine.Native, engine.Rego, engine.Wasm, engine.OPAWasm:
		if url != "" {
			return nil, fmt.Errorf("%w: --url goes with --engine http", errUsage)
		}
	case engine.HTTP:
		if url == "" {
			return nil, fmt.Errorf("%w: --engine http needs --url, e.g. http://127.0.0.1:8181", errUsage)
		}
		e, err := engine.Open(ctx, name, engine.Target{URL: url})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errUsage, err)
		}
		return e, nil
	default:
		return nil, fmt.Errorf("%w: unknown --engine %q (want native, rego, wasm, opa-wasm or http)", errUsage, name)
	}
	if from.bundle != nil && name == engine.Native {
		return nil, fmt.Errorf("%w: the native engine reads SOURCE files, not a bundle", errUsage)
	}
	wcfg, err := wasmConfig(ctx, name)
	if err != nil {
		return nil, err
	}
	e, err := engine.Open(ctx, name, engine.Target{Sources: from.sources, Bundle: from.bundle, Resolver: resolver, Wasm: wcfg})
	if errors.Is(err, engine.ErrNoPolicyWasm) {
		return nil, fmt.Errorf("%s has no policy.wasm: build it with --target wasm, or evaluate it with --engine rego", from.bundleName)
	}
	return e, err
}
