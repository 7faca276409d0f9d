package tests

import (
	"context"
	"fmt"

	"github.com/aclc-dev/aclc/pkg/engine"
	"github.com/aclc-dev/aclc/pkg/translate"
)

// EngineSet is every engine built over one set of sources.
type EngineSet struct {
	Sources *translate.Sources
	Engines []engine.Engine
}

// NewEngineSet builds the bundles once and opens every in-process engine
// on them. The native engine comes first: it is the reference.
func NewEngineSet(ctx context.Context, name string, src []byte) (*EngineSet, error) {
	s := &translate.Sources{}
	if err := s.Add(name, src, translate.KindAuto); err != nil {
		return nil, err
	}
	rb, err := translate.RegoBundle(s)
	if err != nil {
		return nil, fmt.Errorf("rego bundle: %w", err)
	}
	set := &EngineSet{Sources: s}
	set.Engines = append(set.Engines, engine.NewNative(s, nil), engine.NewRego(rb, s.Entrypoints()))
	return set, nil
}

// Close closes every engine.
func (s *EngineSet) Close(ctx context.Context) {
	for _, e := range s.Engines {
		_ = e.Close(ctx)
	}
}
