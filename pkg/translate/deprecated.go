package translate

// SetGroupResolution sets s's group resolution in place.
//
// Deprecated: use WithGroupResolution, which returns a copy and leaves s,
// which other engines or servers may be reading, as it is.
func (s *Sources) SetGroupResolution(spec string, static bool) error {
	c, err := s.WithGroupResolution(spec, static)
	if err == nil {
		*s = *c
	}
	return err
}

// MakePortable sets s to the portable form in place.
//
// Deprecated: use WithPortable, which returns a copy and leaves s as it
// is.
func (s *Sources) MakePortable() error {
	c, err := s.WithPortable()
	if err == nil {
		*s = *c
	}
	return err
}
