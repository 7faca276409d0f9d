package layout

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/aclc-dev/aclc/internal/inputfile"
	"github.com/aclc-dev/aclc/pkg/acl/source"
)

// settingPrefixes are the prefixes of the ConfigMap keys YuniKorn's
// scheduler and admission controller read besides the queue
// configuration (spec §1.3): a file so named is a mounted key.
var settingPrefixes = [...]string{"service.", "kubernetes.", "admissionController.", "log.", "event.", "health."}

// isMountedConfigMap reports whether a directory is a ConfigMap mounted
// as the kubelet lays it out (a ..data entry), one named for either of
// YuniKorn's ConfigMaps (as charts mount them; an optional volume whose
// ConfigMap is absent is an empty directory), or a directory of keys made
// by hand: a file named queues.yaml or for a setting YuniKorn reads, .gz
// or not. service.policyGroup, which chooses another <group>.yaml, is
// itself such a key.
func isMountedConfigMap(dir string, entries []fs.DirEntry) bool {
	if name := filepath.Base(filepath.Clean(dir)); name == DefaultsName || name == ConfigsName {
		return true
	}
	for _, de := range entries {
		name := de.Name()
		if name == "..data" {
			return true
		}
		if strings.HasPrefix(name, "..") {
			continue
		}
		if key, gz := BinaryKey(name); gz {
			name = key
		}
		if isReadKey(name) {
			if st, err := os.Stat(filepath.Join(dir, de.Name())); err == nil && !st.IsDir() {
				return true
			}
		}
	}
	return false
}

func isReadKey(key string) bool {
	if key == QueuesKey(DefaultPolicyGroup) {
		return true
	}
	for _, p := range settingPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// manifestExtensions are the files kubectl apply -f DIR reads.
var manifestExtensions = [...]string{".yaml", ".yml", ".json"}

// notMounted says why aclc read a directory file by file and what it
// expected of it.
const notMounted = "not a mounted ConfigMap (no ..data entry, not named yunikorn-configs or yunikorn-defaults, " +
	"no file named queues.yaml or for a key YuniKorn reads, " +
	"such as service.*, log.* or admissionController.*), so read as kubectl apply -f reads a directory: " +
	"its .yaml, .yml and .json files, each holding Kubernetes objects (ConfigMaps, Namespaces, Lists of them)"

// readManifestDir reads a directory that is not a mounted ConfigMap as
// kubectl apply -f reads one: each .yaml, .yml and .json file in name
// order, not descending into sub-directories, every one a file of
// Kubernetes objects. A file with nothing in it is skipped, as kubectl
// skips it; a queues.yaml or a VOV source is refused, since YuniKorn
// would not read it from there: such a file is given as a source of its
// own. A directory without a ConfigMap or a Namespace is an error, never
// an empty configuration.
func readManifestDir(dir string, entries []fs.DirEntry) (*File, error) {
	out := &File{Name: dir}
	var skipped int
	for _, de := range entries {
		if strings.HasPrefix(de.Name(), "..") || !hasManifestExtension(de.Name()) {
			continue
		}
		path := filepath.Join(dir, de.Name())
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			continue
		}
		data, err := inputfile.ReadFile(path, inputfile.MaxSource)
		var refused *inputfile.Error
		if errors.As(err, &refused) {
			if errors.Is(err, inputfile.ErrTooLarge) {
				return nil, &Error{Code: source.CodeTooLarge, File: path, Msg: fmt.Sprintf("larger than a source aclc reads (%s)", inputfile.Size(inputfile.MaxSource))}
			}
			return nil, &Error{Code: CodeNotRegularFile, File: path, Msg: refused.Type + ", not a regular file"}
		}
		if err != nil {
			return nil, fmt.Errorf("read configuration directory: %w", err)
		}
		f, n, err := readManifestFile(dir, path, data)
		if err != nil {
			return nil, source.WithFile[layoutKind](err, path)
		}
		skipped += n
		out.ConfigMaps = append(out.ConfigMaps, f.ConfigMaps...)
		out.Namespaces = append(out.Namespaces, f.Namespaces...)
		out.Diagnostics = append(out.Diagnostics, f.Diagnostics...)
	}
	if len(out.ConfigMaps) == 0 && len(out.Namespaces) == 0 {
		found := "none of them holds a ConfigMap or a Namespace"
		if skipped > 0 {
			found = fmt.Sprintf("its %d objects include no ConfigMap and no Namespace", skipped)
		}
		return nil, &Error{Code: CodeNotMounted, File: dir, Msg: notMounted + "; " + found}
	}
	return out, nil
}

// readManifestFile reads one file of a directory read as kubectl reads
// it, and counts the objects skipped.
func readManifestFile(dir, path string, data []byte) (*File, int, error) {
	f := &File{Name: path}
	docs, err := parse(path, data)
	var yamlErr yamlError
	if errors.As(err, &yamlErr) {
		return nil, 0, syntaxError(yamlErr.err, data)
	}
	if err != nil {
		return nil, 0, err
	}
	for _, d := range docs {
		if isEmptyDocument(d) {
			continue
		}
		if d = source.ResolveAlias(d); d == nil || d.Kind != yaml.MappingNode || !isManifest(d) {
			what, hint := "not a Kubernetes object", "give it as a source of its own"
			switch {
			case d != nil && d.Kind == yaml.MappingNode && lookup(d, "vov") != nil:
				what = "a VOV ACL source, not a Kubernetes object"
			case d != nil && d.Kind == yaml.MappingNode && lookup(d, "partitions") != nil:
				what, hint = "a queue configuration, not a Kubernetes object", "give it as a source of its own, or name it queues.yaml to make the directory a ConfigMap's keys"
			}
			return nil, 0, located(CodeNotMounted, d, "", fmt.Sprintf("%s: %s is %s; %s", what, dir, notMounted, hint))
		}
		break
	}
	skipped, err := f.addObjects(path, data, docs)
	if err != nil {
		return nil, 0, err
	}
	f.skip(path, skipped)
	return f, len(skipped), nil
}

func hasManifestExtension(name string) bool {
	for _, ext := range manifestExtensions {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}
