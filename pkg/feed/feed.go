// Package feed gives a command or a server its sources, from files or
// from the API server (YuniKorn's ConfigMaps and the Namespaces), read
// once or followed, and tells a server when they change.
package feed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aclc-dev/aclc/pkg/acl/admission"
	"github.com/aclc-dev/aclc/pkg/acl/layout"
	"github.com/aclc-dev/aclc/pkg/acl/yunikorn/release"
	vovfamily "github.com/aclc-dev/aclc/pkg/family/vov"
	"github.com/aclc-dev/aclc/pkg/kube"
	"github.com/aclc-dev/aclc/pkg/opsmetrics"
	"github.com/aclc-dev/aclc/pkg/reload"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// Files are SOURCE arguments: files, directories (a ConfigMap mounted as
// one) and "-" for standard input, read as YuniKorn release Release.
type Files struct {
	Paths   []string
	Kind    translate.Kind
	Release release.Version
	// Stdin gives the text of "-": standard input is read once, by the
	// caller, however many places name it. It is called only when a path
	// is "-".
	Stdin func() ([]byte, error)
	// StdinName is how messages name "-": "<stdin>".
	StdinName string
}

// Load reads the files as they are now.
func (fs Files) Load() (*translate.Sources, error) {
	paths, kind := fs.Paths, fs.Kind
	if !slices.Contains(paths, "-") {
		return translate.LoadSourcesAs(paths, kind, fs.Release)
	}
	inputs := make([]translate.Input, 0, len(paths))
	for _, p := range paths {
		if p == "-" {
			if fs.Stdin == nil {
				return nil, errors.New("-: no standard input here")
			}
			b, err := fs.Stdin()
			if err != nil {
				return nil, err
			}
			inputs = append(inputs, translate.Input{Name: fs.StdinName, Data: b})
			continue
		}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			inputs = append(inputs, translate.Input{Name: p, Dir: p})
			continue
		}
		b, err := translate.ReadSource(p)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, translate.Input{Name: p, Data: b})
	}
	s, err := (&translate.Sources{}).WithYuniKornRelease(fs.Release)
	if err != nil {
		return nil, err
	}
	if err := s.AddInputs(inputs, kind); err != nil {
		return nil, err
	}
	return s, nil
}

// Feed gives a command its sources, from files or from the cluster, and
// tells a server when they change. With the cluster, the files may add VOV
// sources; YuniKorn configuration comes from the cluster only.
type Feed struct {
	cluster *kube.Options // nil: files only
	files   Files
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

// ErrUsage is matched by an error of how the feed was asked for (files
// of YuniKorn's configuration beside the cluster's).
var ErrUsage = errors.New("usage")

// WithGuardOff turns off the admission guard's parts in every load.
func (f *Feed) WithGuardOff(parts []admission.GuardPart) *Feed {
	f.guardOff = parts
	return f
}

// New returns the feed of files and, when cluster is not nil, of the API
// server it names: follow is set for servers, which keep watching; ctx
// bounds the watch.
func New(ctx context.Context, files Files, cluster *kube.Options, follow bool) (*Feed, error) {
	srcs := files.Paths
	f := &Feed{files: files}
	if cluster == nil {
		if follow {
			f.fileWatch = reload.New(srcs)
		}
		return f, nil
	}
	c := *cluster
	f.cluster = &c
	if follow {
		// Even without files: Watch may add a groups file or an LDAP
		// secret directory the configuration chooses.
		f.fileWatch = reload.New(srcs)
	}
	client, err := kube.Client(c)
	if err != nil {
		return nil, err
	}
	if !follow {
		f.once = func(ctx context.Context) (*layout.File, error) { return kube.Read(ctx, client, c) }
		return f, nil
	}
	if f.watch, err = kube.StartWatch(ctx, client, c); err != nil {
		return nil, err
	}
	return f, nil
}

// SourceHealth says whether the cluster watch sees the API server; files
// are always in sight (a change that does not load is a reload failure).
func (f *Feed) SourceHealth() opsmetrics.SourceHealth {
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
func (f *Feed) Watch(paths ...string) {
	if f.fileWatch != nil {
		f.fileWatch.Add(paths...)
	}
}

// Describe names where the sources come from, for messages.
func (f *Feed) Describe() string {
	return Describe(f.cluster, f.files.Paths)
}

// Load reads the sources as they are now.
func (f *Feed) Load() (*translate.Sources, error) {
	s, err := f.load()
	if err != nil {
		return nil, err
	}
	return s.WithGuardOff(f.guardOff), nil
}

func (f *Feed) load() (*translate.Sources, error) {
	if f.cluster == nil {
		return f.files.Load()
	}
	s, err := (&translate.Sources{}).WithYuniKornRelease(f.files.Release)
	if err != nil {
		return nil, err
	}
	if len(f.files.Paths) > 0 {
		var err error
		if s, err = f.files.Load(); err != nil {
			return nil, err
		}
		if s.Layout() != nil || s.Kubernetes() != nil {
			return nil, fmt.Errorf("%w: %s: YuniKorn configuration beside --from-cluster; the cluster's ConfigMaps and Namespaces are the configuration (only VOV sources may be given with it)", ErrUsage, strings.Join(f.files.Paths, ", "))
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
func (f *Feed) Run(ctx context.Context, interval time.Duration, changed func() error) {
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

// Describe names where sources come from, for messages: the API server
// cluster names (nil: none) and the files.
func Describe(cluster *kube.Options, files []string) string {
	if cluster == nil {
		return strings.Join(files, ", ")
	}
	d := kube.Describe(*cluster)
	if len(files) > 0 {
		d += " and " + strings.Join(files, ", ")
	}
	return d
}

// ConfigMaps reads YuniKorn's ConfigMaps from the sources as they are
// now, without loading them: a configuration that does not load still
// holds the ConfigMap a change is placed beside.
func (f *Feed) ConfigMaps() ([]*layout.ConfigMap, error) {
	var out []*layout.ConfigMap
	if f.cluster != nil {
		var file *layout.File
		if f.watch != nil {
			file = f.watch.File()
		} else {
			var err error
			if file, err = f.once(context.Background()); err != nil {
				return nil, err
			}
		}
		return file.ConfigMaps, nil
	}
	vov := vovfamily.Family{}
	for _, p := range f.files.Paths {
		var file *layout.File
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			if file, err = layout.ReadDir(p); err != nil {
				return nil, err
			}
		} else {
			data, err := translate.ReadSource(p)
			if err != nil {
				return nil, err
			}
			if f.files.Kind == translate.KindVOV || (f.files.Kind == translate.KindAuto && vov.Claims(translate.Input{Name: p, Data: data})) {
				continue
			}
			if file, err = layout.Read(p, data); err != nil {
				return nil, err
			}
		}
		out = append(out, file.ConfigMaps...)
	}
	return out, nil
}
