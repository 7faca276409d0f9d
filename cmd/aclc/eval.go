package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
	"github.com/aclc-dev/aclc/wasm"
)

const evalExamples = `  echo '{"queue":"root.test","action":"submit","user":"sue"}' |
    aclc eval --engine native --entrypoint yunikorn/queues/decision examples/yunikorn/acl-doc.yaml
  aclc eval --engine rego --entrypoint yunikorn/queues/decision --input in.json examples/yunikorn/org.yaml
  aclc eval --jsonl --entrypoint yunikorn/queues/decision --bundle queues.tar.gz < inputs.jsonl
  aclc eval --engine http --url http://127.0.0.1:8181 --entrypoint yunikorn/queues/decision --input in.json
`

func runEval(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("eval", "aclc eval [--engine native|rego|wasm|opa-wasm|http] [--url URL] --entrypoint E [--resolver R] [--input FILE|-] [--jsonl] (SOURCE... | --bundle FILE)", evalExamples, stderr)
	engineName := fs.String("engine", engine.Wasm, "`engine`: native, rego, wasm, opa-wasm or http")
	url := fs.String("url", "", "base `URL` of an OPA-compatible server (engine http)")
	ep := fs.String("entrypoint", "", "decision `entrypoint`, e.g. yunikorn/queues/decision")
	resolver := fs.String("resolver", "", resolverUsage)
	inputPath := fs.String("input", "-", "input `file` (JSON), or - for standard input")
	jsonl := fs.Bool("jsonl", false, "read one JSON input per line and write one compact decision per line")
	bundlePath := fs.String("bundle", "", "evaluate this bundle `file` instead of building SOURCE")
	cl := registerClusterFlags(fs)
	srcs, err := parseInterleaved(fs, args)
	if err != nil {
		return parseStatus(err)
	}
	if err := cl.check(fs, *bundlePath, *engineName); err != nil {
		errorf(stderr, "eval: %v", err)
		return exitUsage
	}
	if *ep == "" {
		errorf(stderr, "eval: --entrypoint is required")
		fs.Usage()
		return exitUsage
	}
	if (len(srcs) == 0) == (*bundlePath == "") && *engineName != engine.HTTP && !cl.enabled {
		errorf(stderr, "eval: give either SOURCE files or --bundle")
		return exitUsage
	}
	ctx := context.Background()
	eng, err := cl.openEngine(ctx, *engineName, *url, srcs, *bundlePath, *resolver)
	if err != nil {
		errorf(stderr, "eval: %v", err)
		if errors.Is(err, errUsage) {
			return exitUsage
		}
		return exitError
	}
	defer eng.Close(ctx)

	var in io.Reader = stdin
	if *inputPath != "-" {
		f, err := os.Open(*inputPath)
		if err != nil {
			errorf(stderr, "eval: %v", err)
			return exitError
		}
		defer f.Close()
		in = f
	}
	if *jsonl {
		return evalLines(ctx, eng, *ep, in, stdout, stderr)
	}
	raw, err := io.ReadAll(in)
	if err != nil {
		errorf(stderr, "eval: read input: %v", err)
		return exitError
	}
	if !json.Valid(raw) {
		errorf(stderr, "eval: input is not valid JSON")
		return exitError
	}
	out, err := eng.Eval(ctx, *ep, raw)
	if err != nil {
		errorf(stderr, "eval: %v", err)
		if errors.Is(err, engine.ErrUnknownEntrypoint) {
			return exitUsage
		}
		return exitError
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, canonicalJSON(out), "", "  ") != nil {
		pretty.Reset()
		pretty.Write(out)
	}
	fmt.Fprintln(stdout, pretty.String())
	return exitOK
}

// canonicalJSON writes a decision with its object keys sorted, so every
// engine prints the same bytes (OPA's Wasm keeps the policy's key order).
// Strings are left unescaped beyond what JSON needs; numbers keep their
// text. Anything that does not decode is returned as it came.
func canonicalJSON(out []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return out
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return out
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// evalLines answers one decision per input line, in order; a bad line gets
// {"error": ...} and the rest go on.
func evalLines(ctx context.Context, eng engine.Engine, ep string, in io.Reader, stdout, stderr io.Writer) int {
	status := exitOK
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var out json.RawMessage
		var err error
		if !json.Valid(raw) {
			err = fmt.Errorf("line %d: input is not valid JSON", line)
		} else if out, err = eng.Eval(ctx, ep, raw); err != nil {
			err = fmt.Errorf("line %d: %w", line, err)
		}
		if err != nil {
			status = exitError
			b, _ := json.Marshal(map[string]string{"error": err.Error()})
			out = b
		}
		w.Write(canonicalJSON(out))
		w.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		errorf(stderr, "eval: read input: %v", err)
		return exitError
	}
	return status
}

var errUsage = errors.New("usage")

// openEngine builds the named engine from sources or a bundle file.
func openEngine(ctx context.Context, name, url string, srcs []string, bundlePath, resolver string) (engine.Engine, error) {
	switch name {
	case engine.Native, engine.Rego, engine.Wasm, engine.OPAWasm:
		if url != "" {
			return nil, fmt.Errorf("%w: --url goes with --engine http", errUsage)
		}
	case engine.HTTP:
		switch {
		case url == "":
			return nil, fmt.Errorf("%w: --engine http needs --url, e.g. http://127.0.0.1:8181", errUsage)
		case len(srcs) > 0 || bundlePath != "":
			return nil, fmt.Errorf("%w: --engine http asks the server at --url; it takes no SOURCE or --bundle", errUsage)
		}
		e, err := engine.NewHTTP(url)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errUsage, err)
		}
		return e, nil
	default:
		return nil, fmt.Errorf("%w: unknown --engine %q (want native, rego, wasm, opa-wasm or http)", errUsage, name)
	}
	var s *translate.Sources
	var b *bundle.Bundle
	var g translate.GroupResolution
	var err error
	if bundlePath != "" {
		if name == engine.Native {
			return nil, fmt.Errorf("%w: the native engine reads SOURCE files, not a bundle", errUsage)
		}
		if b, err = translate.ReadBundle(bundlePath); err != nil {
			return nil, err
		}
		if g, err = translate.BundleGroupResolution(b.Data, resolver); err != nil {
			return nil, err
		}
	} else if s, err = loadSources(srcs, translate.KindAuto, resolver, false); err != nil {
		return nil, err
	} else {
		g = s.Groups()
	}
	// The engine's own cache: nothing about groups is process-wide.
	cache := engine.NewGroupCache(g)
	switch name {
	case engine.Native:
		return engine.NewNative(s, cache), nil
	case engine.Rego:
		if b != nil {
			return engine.NewRego(b, engine.BundleEntrypoints(b), cache), nil
		}
		if b, err = translate.RegoBundle(s); err != nil {
			return nil, err
		}
		return engine.NewRego(b, s.Entrypoints(), cache), nil
	}
	if b == nil {
		if b, err = translate.WasmBundle(ctx, s); err != nil {
			return nil, err
		}
	}
	if len(b.WasmModules) == 0 {
		return nil, fmt.Errorf("%s has no policy.wasm: build it with --target wasm", bundlePath)
	}
	if name == engine.OPAWasm {
		return engine.NewOPAWasm(ctx, b, cache)
	}
	raw, err := translate.BundleBytes(b)
	if err != nil {
		return nil, err
	}
	return engine.NewWasm(ctx, raw, wasm.NewConfig(), cache)
}
