package layout

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aclc-dev/aclc/internal/inputfile"
	"github.com/aclc-dev/aclc/pkg/acl/source"
)

// ReadDir reads a directory given as a source. A ConfigMap mounted as a
// directory is read as the kubelet lays it out: one file per key (a
// symlink into ..data), with ..data, ..<timestamp> and other ..* entries
// and sub-directories skipped. Keys ending in .gz, in any case, are
// binaryData, the others data. The directory's base name is the
// ConfigMap's name when it is one of YuniKorn's two, else it stands for
// yunikorn-configs.
//
// A directory with no ..data entry, named for neither ConfigMap, and with
// no file named for a key YuniKorn reads is not a mounted ConfigMap: it is read as kubectl apply -f reads a
// directory, its .yaml, .yml and .json files in name order, each a file
// of Kubernetes objects.
func ReadDir(dir string) (*File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read configuration directory: %w", err)
	}
	if !isMountedConfigMap(dir, entries) {
		return readManifestDir(dir, entries)
	}
	name := filepath.Base(filepath.Clean(dir))
	cm := &ConfigMap{Name: name, File: dir}
	if name != DefaultsName && name != ConfigsName {
		cm.Name, cm.Implicit = ConfigsName, true
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, de := range entries {
		key := de.Name()
		if strings.HasPrefix(key, "..") {
			continue
		}
		path := filepath.Join(dir, key)
		st, err := os.Stat(path) // follows the kubelet's symlinks
		if err != nil {
			return nil, fmt.Errorf("read configuration directory: %w", err)
		}
		if st.IsDir() {
			continue
		}
		// A named pipe or a device is refused at once, and a key is read
		// no further than a ConfigMap can hold, even if it grows.
		raw, err := inputfile.ReadFile(path, MaxValue)
		var refused *inputfile.Error
		if errors.As(err, &refused) {
			if errors.Is(err, inputfile.ErrTooLarge) {
				return nil, &Error{Code: source.CodeTooLarge, File: path, Msg: "larger than a ConfigMap can hold (1 MiB)"}
			}
			return nil, &Error{Code: CodeNotRegularFile, File: path, Msg: refused.Type + ", not a regular file: a mounted ConfigMap key is a file"}
		}
		if err != nil {
			return nil, fmt.Errorf("read configuration directory: %w", err)
		}
		e := Entry{Key: key, Value: string(raw), File: path, loc: Locator{File: path}}
		if _, gz := BinaryKey(key); gz {
			e.loc.File = path + "[gunzipped]"
			cm.BinaryData = append(cm.BinaryData, e)
			continue
		}
		cm.Data = append(cm.Data, e)
	}
	return &File{Name: dir, ConfigMaps: []*ConfigMap{cm}}, nil
}

// MaxValue is the most a mounted key may hold: the API server refuses a
// ConfigMap over 1 MiB, so anything larger did not come from one.
const MaxValue = 1 << 20
