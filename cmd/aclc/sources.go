package main

import (
	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// loadSources reads the sources and settles their group resolution; the
// process-wide group cache is set up for it, so every engine opened
// afterwards resolves the same way.
func loadSources(paths []string, kind translate.Kind, resolver string, static bool) (*translate.Sources, error) {
	s, err := translate.LoadSources(paths, kind)
	if err != nil {
		return nil, err
	}
	if err := s.SetGroupResolution(resolver, static); err != nil {
		return nil, err
	}
	engine.UseGroupResolution(s.Groups())
	return s, nil
}

const resolverUsage = "group `resolver` for requests without groups: none, os, test or file=PATH (an /etc/group-style file or a YAML map user → groups); default: the queue config's usergroupresolver.type, else none"
