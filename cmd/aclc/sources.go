package main

import (
	"github.com/aclc-dev/aclc/pkg/translate"
)

// loadSources reads the sources and settles their group resolution; each
// engine opened on them gets its own cache over that resolution.
func loadSources(paths []string, kind translate.Kind, resolver string, static bool) (*translate.Sources, error) {
	s, err := translate.LoadSources(paths, kind)
	if err != nil {
		return nil, err
	}
	if err := s.SetGroupResolution(resolver, static); err != nil {
		return nil, err
	}
	return s, nil
}

const resolverUsage = "group `resolver` for requests without groups: none, os, test, file=PATH (an /etc/group-style file or a YAML map user → groups) or ldap=DIR (YuniKorn's LDAP secret, one file per key); default: the queue config's usergroupresolver.type (ldap reads /run/secrets/ldap), else none"
