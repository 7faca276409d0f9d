package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/kube"
	"github.com/aclc-dev/aclc/pkg/opsmetrics"
	"github.com/aclc-dev/aclc/pkg/reload"
	"github.com/aclc-dev/aclc/pkg/serve"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// clusterFlags are the flags that read YuniKorn's configuration from the
// API server instead of files (serve, webhook, eval, check).
type clusterFlags struct {
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
func registerClusterFlags(fs *pflag.FlagSet) *clusterFlags {
	c := &clusterFlags{}
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

// sourceFeed gives a command its sources, from files or from the cluster,
// and tells a server when they change. With --from-cluster, SOURCE files
// may add VOV sources; YuniKorn configuration comes from the cluster only.
type sourceFeed struct {
	cluster *clusterFlags // nil: files only
	files   []string
	kind    translate.Kind
	// files mode: taken before the first load, so a change during it is seen.
	fileWatch *reload.Watcher
	// cluster mode: the informers of a server, or a client for one read.
	watch *kube.Watch
	once  func(context.Context) (*layout.File, error)

	mu     sync.Mutex
	loaded string // stamp of the cluster objects first loaded

	// guardOff are the admission guard's parts turned off, on every load.
	guardOff []admission.GuardPart
}

// feed returns the sources of the command: follow is set for servers,
// which keep watching; ctx bounds the watch.
func (c *clusterFlags) feed(ctx context.Context, srcs []string, kind translate.Kind, follow bool) (*sourceFeed, error) {
	f := &sourceFeed{files: srcs, kind: kind}
	if c == nil || !c.enabled {
		if follow {
			f.fileWatch = reload.New(srcs)
		}
		return f, nil
	}
	f.cluster = c
	if follow {
		// Even without files: Watch may add a groups file or an LDAP
		// secret directory the configuration chooses.
		f.fileWatch = reload.New(srcs)
	}
	client, err := kube.Client(c.opts)
	if err != nil {
		return nil, err
	}
	if !follow {
		f.once = func(ctx context.Context) (*layout.File, error) { return kube.Read(ctx, client, c.opts) }
		return f, nil
	}
	if f.watch, err = kube.StartWatch(ctx, client, c.opts); err != nil {
		return nil, err
	}
	return f, nil
}

// SourceHealth says whether the cluster watch sees the API server; files
// are always in sight (a change that does not load is a reload failure).
func (f *sourceFeed) SourceHealth() opsmetrics.SourceHealth {
	if f.watch == nil {
		return opsmetrics.SourceHealth{}
	}
	h := f.watch.Health()
	return opsmetrics.SourceHealth{StaleSince: h.StaleSince, Reason: h.Reason, Errors: h.Errors, LastError: h.LastError}
}

// Watch follows more paths a load read besides the sources, such as the
// LDAP secret directory a configuration chooses: a change to them is a
// change of the sources. It does nothing for a command that does not
// follow.
func (f *sourceFeed) Watch(paths ...string) {
	if f.fileWatch != nil {
		f.fileWatch.Add(paths...)
	}
}

// Describe names where the sources come from, for messages.
func (f *sourceFeed) Describe() string {
	if f.cluster == nil {
		return strings.Join(f.files, ", ")
	}
	d := kube.Describe(f.cluster.opts)
	if len(f.files) > 0 {
		d += " and " + strings.Join(f.files, ", ")
	}
	return d
}

// Load reads the sources as they are now.
func (f *sourceFeed) Load() (*translate.Sources, error) {
	s, err := f.load()
	if err != nil {
		return nil, err
	}
	return s.WithGuardOff(f.guardOff), nil
}

func (f *sourceFeed) load() (*translate.Sources, error) {
	if f.cluster == nil {
		return readSourceFiles(f.files, f.kind)
	}
	s, err := (&translate.Sources{}).WithYuniKornRelease(yunikornRelease)
	if err != nil {
		return nil, err
	}
	if len(f.files) > 0 {
		var err error
		if s, err = readSourceFiles(f.files, f.kind); err != nil {
			return nil, err
		}
		if s.Layout() != nil || s.Kubernetes() != nil {
			return nil, fmt.Errorf("%w: %s: YuniKorn configuration beside --from-cluster; the cluster's ConfigMaps and Namespaces are the configuration (only VOV sources may be given with it)", errUsage, strings.Join(f.files, ", "))
		}
	}
	var file *layout.File
	if f.watch != nil {
		file = f.watch.File()
		f.mu.Lock()
		if f.loaded == "" {
			f.loaded = kube.Stamp(file)
		}
		f.mu.Unlock()
	} else {
		var err error
		if file, err = f.once(context.Background()); err != nil {
			return nil, err
		}
	}
	if err := s.AddLayout(file); err != nil {
		return nil, err
	}
	return s, nil
}

// Run calls changed whenever the sources may have changed, until ctx is
// done: the files every interval, the cluster as its events arrive. It
// returns at once for a command that does not follow.
func (f *sourceFeed) Run(ctx context.Context, interval time.Duration, changed func() error) {
	var wg sync.WaitGroup
	var mu sync.Mutex // one build at a time
	call := func() error {
		mu.Lock()
		defer mu.Unlock()
		return changed()
	}
	if f.fileWatch != nil {
		wg.Add(1)
		go func() { defer wg.Done(); f.fileWatch.Run(ctx, interval, call) }()
	}
	if f.watch != nil {
		f.mu.Lock()
		loaded := f.loaded
		f.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.watch.Run(ctx, kube.DefaultSettle(), loaded, func(*layout.File) error { return call() })
		}()
	}
	wg.Wait()
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
func openFeedEngine(ctx context.Context, f *sourceFeed, name, resolver string) (engine.Engine, error) {
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
		from, err := openFrom(srcs, bundlePath, kind, resolver, name)
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
		return nil, (&sourceFeed{cluster: c, files: srcs}).Describe(), err
	}
	s, err := f.Load()
	return s, f.Describe(), err
}

// serveSources makes cfg serve the files, or the cluster's configuration,
// followed until ctx is done.
func (c *clusterFlags) serveSources(ctx context.Context, cfg serve.Config, srcs []string, kind translate.Kind) (serve.Config, error) {
	if !c.enabled {
		return cfg.WithSources(srcs...).WithKind(kind).WithYuniKornRelease(yunikornRelease), nil
	}
	f, err := c.feed(ctx, srcs, kind, true)
	if err != nil {
		return cfg, err
	}
	return cfg.WithFeed(f), nil
}
