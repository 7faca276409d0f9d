package yunikorn

import (
	"fmt"
	"strconv"
	"time"

	"github.com/aclc-dev/aclc/pkg/acl/layout"
)

// typedSettings are the scheduler's settings read from the same flattened
// ConfigMaps that are not strings, in the order the shim parses them
// (spec §1.3).
var typedSettings = []struct {
	key   string
	parse func(string) error
}{
	{"service.schedulingInterval", parseDuration},
	{"service.volumeBindTimeout", parseDuration},
	{"service.eventChannelCapacity", parseInt(32)},
	{"service.dispatchTimeout", parseDuration},
	{"service.disableGangScheduling", parseBool},
	{"service.enableConfigHotRefresh", parseBool},
	{"service.placeholderRunAsUser", parseInt(64)},
	{"service.placeholderRunAsGroup", parseInt(64)},
	{"service.placeholderFsGroup", parseInt(64)},
	{"kubernetes.qps", parseInt(32)},
	{"kubernetes.burst", parseInt(32)},
	{"admissionController.filtering.generateUniqueAppId", parseBool},
}

func parseDuration(s string) error { _, err := time.ParseDuration(s); return err }
func parseBool(s string) error     { _, err := strconv.ParseBool(s); return err }
func parseInt(bits int) func(string) error {
	return func(s string) error { _, err := strconv.ParseInt(s, 10, bits); return err }
}

// CheckSettings parses the scheduler's typed settings as the k8shim does.
// One unparsable value makes the scheduler exit at start-up and ignore a
// whole reload, queue configuration included, so it is an error here;
// every such value is reported, located where it was written.
func CheckSettings(c *layout.Config) error {
	var errs SourceErrors
	for _, s := range typedSettings {
		v, ok := c.Get(s.key)
		if !ok {
			continue
		}
		if err := s.parse(v.Text); err != nil {
			errs = append(errs, &SourceError{Code: CodeSettingUnparsable, File: v.Entry.File, Line: v.Entry.Line, Column: v.Entry.Column, Value: v.Text,
				Msg: fmt.Sprintf("unable to parse configmap entry %s: %v", s.key, err)})
		}
	}
	return errs.SortAndCompact().Err()
}
