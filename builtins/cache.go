package builtins

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"
)

// YuniKorn's cache lifetimes and cleaner intervals (spec §7.3).
const (
	// PositiveTTL is how long a resolved entry is served before it is
	// resolved again, and the age past which the cleaner removes it.
	PositiveTTL = 300 * time.Second
	// NegativeTTL is the age past which the cleaner removes a failed entry.
	// Lookups do not check it: a failed entry is served until removed.
	NegativeTTL = 30 * time.Second
	// CleanerInterval is the cleaner period of every resolver but the test
	// one (YuniKorn's none, os and ldap; aclc's file).
	CleanerInterval = 60 * time.Second
	// TestCleanerInterval is the cleaner period of the test resolver.
	TestCleanerInterval = time.Second
)

// The identity YuniKorn gives a forced application without a user, or whose
// user does not resolve (common.AnonymousUser, common.AnonymousGroup).
const (
	AnonymousUser  = "nobody"
	AnonymousGroup = "nogroup"
)

// userRegExp is YuniKorn's configs.UserRegExp, which ConvertUGI applies. It
// is a copy of pkg/acl/yunikorn's UserRegExp, the rule's home, so that this
// package stays free of the config loader's dependencies; a test keeps the
// two equal.
var userRegExp = regexp.MustCompile(`^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$`)

// Errors of the cache, with YuniKorn's texts.
var (
	// ErrEmptyUser is returned for an empty user name, unless ConvertUGI is
	// forced.
	ErrEmptyUser = errors.New("empty user cannot resolve")
	// ErrInvalidUserName is returned by ConvertUGI when the user name does
	// not match YuniKorn's configs.UserRegExp.
	ErrInvalidUserName = errors.New("invalid username, it contains invalid characters")
	// ErrCachedFailure is returned, wrapped with the time of the failed
	// lookup, while a failed entry is cached.
	ErrCachedFailure = errors.New("user resolution failed, cached data returned")
)

// Clock is the time source of the cache; tests inject a fake.
type Clock interface{ Now() time.Time }

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// ZeroClock is the clock of YuniKorn's user group cache up to 1.8.0: a
// package time that was never set, so every entry is stamped with the
// zero time, a resolved entry is never stale, the cleaner removes nothing
// and a failed lookup is served with its error for the life of the
// scheduler.
type ZeroClock struct{}

// Now returns the zero time.
func (ZeroClock) Now() time.Time { return time.Time{} }

// UserGroup is a cache entry (YuniKorn's security.UserGroup).
type UserGroup struct {
	User     string
	Groups   []string
	Resolved int64 // unix seconds
	Failed   bool
}

// Cache is YuniKorn's UserGroupCache: positive entries 300 s, failed entries returned with their error until the cleaner removes them (older than 30 s), shim-supplied groups and forced fallbacks overwrite entries.
//
// A Cache is safe for concurrent use. Entries are replaced, never modified,
// so a hit can hand out the stored slice without copying it. Like YuniKorn,
// two concurrent misses for one user both resolve; the later one is kept.
type Cache struct {
	resolver Resolver
	clock    Clock

	// entries maps a user name to its *UserGroup. A sync.Map rather than a
	// map under an RWMutex: hits are nearly all reads, and its lock-free
	// Load keeps concurrent evaluations from contending on a reader count.
	entries sync.Map
}

// NewCache returns an empty cache over r. A nil r is the no-resolver, a nil
// clock the system clock. The cleaner does not run until StartCleaner.
func NewCache(r Resolver, clock Clock) *Cache {
	if r == nil {
		r = NoResolver{}
	}
	if clock == nil {
		clock = SystemClock{}
	}
	return &Cache{resolver: r, clock: clock}
}

// Resolver returns the resolver behind the cache.
func (c *Cache) Resolver() Resolver { return c.resolver }

// GetUserGroup is YuniKorn's UserGroupCache.GetUserGroup (spec §7.3). On a
// failed lookup the entry is still returned, with the error. The returned
// Groups is the caller's own copy.
func (c *Cache) GetUserGroup(user string) (UserGroup, error) {
	return c.GetUserGroupContext(context.Background(), user)
}

// GetUserGroupContext is GetUserGroup for a caller that may give up: a
// lookup that waits on a directory (a ContextResolver) stops when ctx is
// done, and what it then returns is not stored, neither as a success nor as
// a failure, since it says nothing about the user.
func (c *Cache) GetUserGroupContext(ctx context.Context, user string) (UserGroup, error) {
	ug, err := c.getContext(ctx, user)
	return ug.clone(), err
}

// Groups is the fast path the policy builtin uses: the result of GetUserGroup as (groups, error message or "").
//
// The slice is the cached one, shared with other callers: it must not be
// modified.
func (c *Cache) Groups(user string) (groups []string, errMsg string) {
	ug, err := c.get(user)
	if err != nil {
		return ug.Groups, err.Error()
	}
	return ug.Groups, ""
}

// Resolve makes the cache a GroupResolver, so the native decisions can
// resolve through the same cache as the policy builtin. The slice is shared
// as in Groups.
func (c *Cache) Resolve(user string) ([]string, error) {
	ug, err := c.get(user)
	return ug.Groups, err
}

var emptyEntry = &UserGroup{}

// get returns the stored entry itself; callers must not modify it.
func (c *Cache) get(user string) (*UserGroup, error) {
	return c.getContext(context.Background(), user)
}

func (c *Cache) getContext(ctx context.Context, user string) (*UserGroup, error) {
	if user == "" {
		return emptyEntry, ErrEmptyUser
	}
	if v, ok := c.entries.Load(user); ok {
		ug := v.(*UserGroup)
		if ug.Failed {
			// YuniKorn renders the time with %v of a local time.Time.
			return ug, fmt.Errorf("%w: %v", ErrCachedFailure, time.Unix(ug.Resolved, 0))
		}
		if c.clock.Now().Unix()-ug.Resolved < int64(PositiveTTL/time.Second) {
			return ug, nil
		}
	}
	groups, err := ResolveContext(ctx, c.resolver, user)
	if isPanic(err) || (err != nil && ctx.Err() != nil) {
		// YuniKorn dies before it stores anything; the next request
		// resolves again. A lookup whose caller gave up did not finish:
		// the next request asks the directory again too.
		return &UserGroup{User: user, Groups: slices.Clone(groups), Resolved: c.clock.Now().Unix(), Failed: true}, err
	}
	ug := &UserGroup{
		User:     user,
		Groups:   slices.Clone(groups), // the resolver's slice is not ours to share
		Resolved: c.clock.Now().Unix(),
		Failed:   err != nil,
	}
	c.entries.Store(user, ug)
	return ug, err
}

// ConvertUGI is YuniKorn's UserGroupCache.ConvertUGI (spec §7.2) for the
// shim's user and groups. Unlike YuniKorn it does not write nobody/nogroup
// back into the caller's arguments; the returned entry carries them.
//
//   - An empty user is an error, or nobody/nogroup when forced.
//   - Without groups the user is resolved through GetUserGroup and its
//     result returned as is (the user name is not checked), unless forced and
//     the lookup failed: then the groups are ["nogroup"]. A lookup on which
//     YuniKorn panics (a *PanicError) is an error even when forced.
//   - Otherwise the user name must match YuniKorn's configs.UserRegExp, and
//     the user with a copy of the groups — verbatim, duplicates and empty
//     strings kept — is stored as a positive entry, replacing any other.
func (c *Cache) ConvertUGI(user string, groups []string, forced bool) (UserGroup, error) {
	if user == "" {
		if !forced {
			return UserGroup{}, ErrEmptyUser
		}
		user, groups = AnonymousUser, []string{AnonymousGroup}
	}
	if len(groups) == 0 {
		ug, err := c.get(user)
		if !forced || (err == nil && !ug.Failed) || isPanic(err) {
			return ug.clone(), err
		}
		groups = []string{AnonymousGroup}
	}
	if !userRegExp.MatchString(user) {
		return UserGroup{}, ErrInvalidUserName
	}
	ug := &UserGroup{User: user, Groups: slices.Clone(groups), Resolved: c.clock.Now().Unix()}
	c.entries.Store(user, ug)
	return ug.clone(), nil
}

// Clean is one run of YuniKorn's cleaner: it removes positive entries older
// than PositiveTTL and failed entries older than NegativeTTL. Both
// comparisons are strict, so an entry exactly PositiveTTL (NegativeTTL) old
// survives the run.
func (c *Cache) Clean() {
	now := c.clock.Now().Unix()
	oldest := now - int64(PositiveTTL/time.Second)
	oldestFailed := now - int64(NegativeTTL/time.Second)
	c.entries.Range(func(user, v any) bool {
		ug := v.(*UserGroup)
		if ug.Resolved < oldest || (ug.Failed && ug.Resolved < oldestFailed) {
			// Only this entry: one stored since Range read it is fresh.
			c.entries.CompareAndDelete(user, ug)
		}
		return true
	})
}

// StartCleaner runs Clean every interval in a goroutine until stop is
// called; stop waits for the goroutine to end and may be called more than
// once. A non-positive interval is YuniKorn's for the resolver:
// TestCleanerInterval for the test resolver, CleanerInterval otherwise.
// Stopping the cleaner leaves the entries in place; Reset clears them.
func (c *Cache) StartCleaner(interval time.Duration) (stop func()) {
	if interval <= 0 {
		interval = defaultCleanerInterval(c.resolver)
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				c.Clean()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		<-exited
	}
}

// defaultCleanerInterval is YuniKorn's cleaner period for r's kind.
func defaultCleanerInterval(r Resolver) time.Duration {
	if r.Name() == ResolverTest {
		return TestCleanerInterval
	}
	return CleanerInterval
}

// Reset clears all entries.
func (c *Cache) Reset() {
	c.entries.Clear()
}

// isPanic reports whether err is a lookup on which YuniKorn would panic.
func isPanic(err error) bool {
	var p *PanicError
	return errors.As(err, &p)
}

func (ug *UserGroup) clone() UserGroup {
	out := *ug
	out.Groups = slices.Clone(ug.Groups)
	return out
}
