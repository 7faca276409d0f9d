package serve

import (
	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/aclc-dev/aclc/pkg/translate"
)

// admit refuses, when the bundle file must be signed, a bundle whose
// manifest revision is not newer than the one in service. A signature
// proves who built a bundle, not that it is the latest: without an order,
// an older bundle signed with the same key, put back in the file, would
// be loaded and grant again what the newer one took away. At start there
// is nothing in service, and any signed bundle is admitted.
func (s *Server) admit(b *bundle.Bundle) error {
	served := s.served.Load()
	if s.cfg.verification == nil || served == nil {
		return nil
	}
	return translate.CheckNewer(*served, b.Manifest.Revision)
}
