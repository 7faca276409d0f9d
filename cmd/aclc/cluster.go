package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/feed"
	"github.com/aclc-dev/aclc/pkg/kube"
	"github.com/aclc-dev/aclc/pkg/serve"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// clusterFlags are the flags that read YuniKorn's configuration from the
// API server instead of files (serve, webhook, eval, check).
type clusterFlags struct {
	cl      *commandLine
	enabled bool
	opts    kube.Options
	// given names the cluster flags set on the command line.
	given []string
	// clientOnly lets --kubeconfig and --context name an API server
	// without --from-cluster, for a command that talks to it otherwise
	// (webhook --register).
	clientOnly bool
}

// clusterFlagNames are the flags that only mean something with
// --from-cluster.
var clusterFlagNames = []string{"kubeconfig", "context", "namespace", "cluster-timeout"}

// registerClusterFlags adds --from-cluster and its flags to fs.
func registerClusterFlags(fs *pflag.FlagSet, cl *commandLine) *clusterFlags {
	c := &clusterFlags{cl: cl}
	fs.BoolVar(&c.enabled, "from-cluster", false, "read YuniKorn's ConfigMaps (yunikorn-defaults, yunikorn-configs) and the Namespaces from the API server instead of files; servers follow their changes")
	fs.StringVar(&c.opts.Kubeconfig, "kubeconfig", "", "kubeconfig file for --from-cluster (default: $KUBECONFIG, ~/.kube/config, then the pod's ServiceAccount)")
	fs.StringVar(&c.opts.Context, "context", "", "kubeconfig context for --from-cluster (default: the current one)")
	namespaceFlag(fs, &c.opts.Namespace)
	fs.DurationVar(&c.opts.Timeout, "cluster-timeout", kube.DefaultTimeout, "how long --from-cluster may take to read the configuration at start")
	return c
}

// check refuses the flags that do not go with --from-cluster, and cluster
// flags without it; call it after parsing. bundlePath and engineName are
// the command's --bundle and --engine ("" when it has none).
func (c *clusterFlags) check(fs *pflag.FlagSet, bundlePath, engineName string) error {
	c.given = nil
	fs.Visit(func(f *pflag.Flag) {
		for _, n := range clusterFlagNames {
			if f.Name == n && !(c.clientOnly && !c.enabled && (n == "kubeconfig" || n == "context")) {
				c.given = append(c.given, "--"+n)
			}
		}
	})
	switch {
	case !c.enabled && len(c.given) == 1:
		return fmt.Errorf("%s goes with --from-cluster", c.given[0])
	case !c.enabled && len(c.given) > 1:
		return fmt.Errorf("%s go with --from-cluster", strings.Join(c.given, ", "))
	case !c.enabled:
		return nil
	case bundlePath != "":
		return errors.New("--from-cluster builds from the cluster's configuration; a --bundle is built already")
	case engineName == engine.HTTP:
		return errors.New("--from-cluster evaluates in-process; --engine http asks a server that has its own configuration")
	case c.opts.Timeout <= 0:
		return fmt.Errorf("--cluster-timeout %s: want more than 0", c.opts.Timeout)
	}
	return nil
}

// feed returns the sources of the command: follow is set for servers,
// which keep watching; ctx bounds the watch.
func (c *clusterFlags) feed(ctx context.Context, srcs []string, kind translate.Kind, follow bool) (*feed.Feed, error) {
	var cluster *kube.Options
	if c.enabled {
		cluster = &c.opts
	}
	return feed.New(ctx, c.cl.sourceFiles(srcs, kind), cluster, follow)
}

// engineOn opens an in-process engine on loaded sources, with their group
// resolution settled; it returns the sources with that resolution too.
func engineOn(ctx context.Context, name string, s *translate.Sources, resolver string) (engine.Engine, *translate.Sources, error) {
	s, err := s.WithGroupResolution(resolver, false)
	if err != nil {
		return nil, nil, err
	}
	eng, err := openEngine(ctx, name, "", engineSource{sources: s}, resolver)
	return eng, s, err
}

// openFeedEngine loads the feed's sources and opens an engine on them.
func openFeedEngine(ctx context.Context, f *feed.Feed, name, resolver string) (engine.Engine, error) {
	s, err := f.Load()
	if err != nil {
		return nil, err
	}
	eng, _, err := engineOn(ctx, name, s, resolver)
	return eng, err
}

// openEngine opens the engine eval asks for: on the SOURCE files or the
// bundle, or, with --from-cluster, on the cluster's configuration read
// once. An empty name follows the bundle (wasm without one).
func (c *clusterFlags) openEngine(ctx context.Context, name, url string, srcs []string, bundlePath string, kind translate.Kind, resolver string) (engine.Engine, error) {
	if !c.enabled {
		from, err := c.cl.openFrom(srcs, bundlePath, kind, resolver, name)
		if err != nil {
			return nil, err
		}
		if name == "" {
			name = from.defaultEngine()
		}
		return openEngine(ctx, name, url, from, resolver)
	}
	if url != "" {
		return nil, fmt.Errorf("%w: --url goes with --engine http", errUsage)
	}
	if name == "" {
		name = engine.Wasm
	}
	f, err := c.feed(ctx, srcs, kind, false)
	if err != nil {
		return nil, err
	}
	return openFeedEngine(ctx, f, name, resolver)
}

// loadOnce reads the sources once (check), and names them for messages.
func (c *clusterFlags) loadOnce(srcs []string, kind translate.Kind) (*translate.Sources, string, error) {
	f, err := c.feed(context.Background(), srcs, kind, false)
	if err != nil {
		// Named as a feed that loaded would be: the cluster, not the
		// SOURCE files alone, which may be none.
		return nil, feed.Describe(&c.opts, srcs), err
	}
	s, err := f.Load()
	return s, f.Describe(), err
}

// serveSources makes cfg serve the files, or the cluster's configuration,
// followed until ctx is done.
func (c *clusterFlags) serveSources(ctx context.Context, cfg serve.Config, srcs []string, kind translate.Kind) (serve.Config, error) {
	if !c.enabled {
		return cfg.WithSources(srcs...).WithKind(kind).WithYuniKornRelease(c.cl.release), nil
	}
	f, err := c.feed(ctx, srcs, kind, true)
	if err != nil {
		return cfg, err
	}
	return cfg.WithFeed(f), nil
}
