package builtins

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// t0 is the fake clock's start, in unix seconds.
const t0 = 1_700_000_000

// fakeClock is a Clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(t0, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// countingResolver counts the lookups that reach the resolver, which is how
// a test tells a cache hit from a miss.
type countingResolver struct {
	Resolver
	calls atomic.Int64
}

func (r *countingResolver) Resolve(user string) ([]string, error) {
	r.calls.Add(1)
	return r.Resolver.Resolve(user)
}

// cachedErr is the error of a cached failure resolved at t0+offset.
func cachedErr(offset int64) string {
	return "user resolution failed, cached data returned: " + fmt.Sprint(time.Unix(t0+offset, 0))
}

// step is one call on a cache: GetUserGroup, or ConvertUGI when ugi is set.
type step struct {
	advance time.Duration // clock move before the call
	ugi     bool
	user    string
	groups  []string
	forced  bool

	want      UserGroup // Resolved as an offset from t0
	wantErr   string
	wantCalls int64 // resolver calls so far
}

func runSteps(t *testing.T, r Resolver, steps []step) *Cache {
	t.Helper()
	clock := newFakeClock()
	cr := &countingResolver{Resolver: r}
	c := NewCache(cr, clock)
	for i, s := range steps {
		clock.Advance(s.advance)
		var got UserGroup
		var err error
		if s.ugi {
			got, err = c.ConvertUGI(s.user, s.groups, s.forced)
		} else {
			got, err = c.GetUserGroup(s.user)
		}
		want := s.want
		if want.User != "" {
			want.Resolved += t0
		}
		if got.User != want.User || !slices.Equal(got.Groups, want.Groups) ||
			got.Resolved != want.Resolved || got.Failed != want.Failed {
			t.Errorf("step %d (%q): got %+v, want %+v", i, s.user, got, want)
		}
		if errText(err) != s.wantErr {
			t.Errorf("step %d (%q): error %q, want %q", i, s.user, errText(err), s.wantErr)
		}
		if n := cr.calls.Load(); n != s.wantCalls {
			t.Errorf("step %d (%q): %d resolver calls, want %d", i, s.user, n, s.wantCalls)
		}
	}
	return c
}

// TestGetUserGroup pins YuniKorn's GetUserGroup and its cache (spec §7.3;
// upstream TestGetUserGroupCache, TestGetUserGroupFail,
// TestPositiveCacheHitExpiryTriggersRefresh).
func TestGetUserGroup(t *testing.T) {
	testuser1 := []string{"group1000", "group1001"}
	for _, tc := range []struct {
		name  string
		r     Resolver
		steps []step
	}{
		{"empty user cannot resolve and is not cached", TestResolver{}, []step{
			{user: "", wantErr: "empty user cannot resolve"},
			{user: "", wantErr: "empty user cannot resolve"},
		}},
		{"positive entry is served within 300 s", TestResolver{}, []step{
			{user: "testuser1", want: UserGroup{User: "testuser1", Groups: testuser1}, wantCalls: 1},
			{advance: 299 * time.Second, user: "testuser1", want: UserGroup{User: "testuser1", Groups: testuser1}, wantCalls: 1},
		}},
		{"positive entry aged 300 s is resolved again", TestResolver{}, []step{
			{user: "testuser1", want: UserGroup{User: "testuser1", Groups: testuser1}, wantCalls: 1},
			{advance: 300 * time.Second, user: "testuser1", want: UserGroup{User: "testuser1", Groups: testuser1, Resolved: 300}, wantCalls: 2},
			{advance: 299 * time.Second, user: "testuser1", want: UserGroup{User: "testuser1", Groups: testuser1, Resolved: 300}, wantCalls: 2},
		}},
		{"failed lookup is cached and returned with the cached-data error regardless of age", TestResolver{}, []step{
			{user: "unknown", want: UserGroup{User: "unknown", Failed: true},
				wantErr: "lookup failed for user: unknown", wantCalls: 1},
			{advance: 10 * time.Second, user: "unknown", want: UserGroup{User: "unknown", Failed: true},
				wantErr: cachedErr(0), wantCalls: 1},
			{advance: time.Hour, user: "unknown", want: UserGroup{User: "unknown", Failed: true},
				wantErr: cachedErr(0), wantCalls: 1},
		}},
		{"failed group lookup keeps the primary group in the cached entry", TestResolver{}, []step{
			{user: "testuser5", want: UserGroup{User: "testuser5", Groups: []string{"group1001"}, Failed: true},
				wantErr: "lookup failed for user: testuser5", wantCalls: 1},
			{user: "testuser5", want: UserGroup{User: "testuser5", Groups: []string{"group1001"}, Failed: true},
				wantErr: cachedErr(0), wantCalls: 1},
		}},
		{"users are cached separately", TestResolver{}, []step{
			{user: "testuser1", want: UserGroup{User: "testuser1", Groups: testuser1}, wantCalls: 1},
			{user: "testuser3", want: UserGroup{User: "testuser3", Groups: []string{"group1001", "group1002", "group1003", "group1004"}}, wantCalls: 2},
			{user: "testuser1", want: UserGroup{User: "testuser1", Groups: testuser1}, wantCalls: 2},
		}},
		{"no-resolver echoes invalid characters", NoResolver{}, []step{
			{user: "invaliduser><+", want: UserGroup{User: "invaliduser><+", Groups: []string{"invaliduser><+"}}, wantCalls: 1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, tc.r, tc.steps) })
	}
}

// TestConvertUGI pins YuniKorn's ConvertUGI (spec §7.2; upstream
// TestConvertUGI, TestForcePlaceApp).
func TestConvertUGI(t *testing.T) {
	nobody := UserGroup{User: "nobody", Groups: []string{"nogroup"}}
	for _, tc := range []struct {
		name  string
		r     Resolver
		steps []step
	}{
		{"empty user is an error", TestResolver{}, []step{
			{ugi: true, user: "", wantErr: "empty user cannot resolve"},
			{ugi: true, user: "", groups: []string{"dev"}, wantErr: "empty user cannot resolve"},
		}},
		{"forced empty user is nobody in nogroup", TestResolver{}, []step{
			{ugi: true, user: "", forced: true, want: nobody},
			{ugi: true, user: "", groups: []string{"dev"}, forced: true, want: nobody},
			{user: "nobody", want: nobody},
		}},
		{"groups given skip resolution and are stored for 300 s", NoResolver{}, []step{
			{ugi: true, user: "alice", groups: []string{"dev"}, want: UserGroup{User: "alice", Groups: []string{"dev"}}},
			{advance: 299 * time.Second, ugi: true, user: "alice", want: UserGroup{User: "alice", Groups: []string{"dev"}}},
			{advance: time.Second, ugi: true, user: "alice", want: UserGroup{User: "alice", Groups: []string{"alice"}, Resolved: 300}, wantCalls: 1},
		}},
		{"groups given overwrite a resolved entry", TestResolver{}, []step{
			{user: "testuser1", want: UserGroup{User: "testuser1", Groups: []string{"group1000", "group1001"}}, wantCalls: 1},
			{advance: 5 * time.Second, ugi: true, user: "testuser1", groups: []string{"x"}, want: UserGroup{User: "testuser1", Groups: []string{"x"}, Resolved: 5}, wantCalls: 1},
			{user: "testuser1", want: UserGroup{User: "testuser1", Groups: []string{"x"}, Resolved: 5}, wantCalls: 1},
		}},
		{"groups given overwrite a failed entry", TestResolver{}, []step{
			{user: "unknown", want: UserGroup{User: "unknown", Failed: true}, wantErr: "lookup failed for user: unknown", wantCalls: 1},
			{ugi: true, user: "unknown", groups: []string{"g"}, want: UserGroup{User: "unknown", Groups: []string{"g"}}, wantCalls: 1},
			{user: "unknown", want: UserGroup{User: "unknown", Groups: []string{"g"}}, wantCalls: 1},
		}},
		{"forced fallback on failure caches nogroup as positive", TestResolver{}, []step{
			{ugi: true, user: "unknown", forced: true, want: UserGroup{User: "unknown", Groups: []string{"nogroup"}}, wantCalls: 1},
			{ugi: true, user: "unknown", want: UserGroup{User: "unknown", Groups: []string{"nogroup"}}, wantCalls: 1},
		}},
		{"forced fallback on a cached failure", TestResolver{}, []step{
			{user: "testuser5", want: UserGroup{User: "testuser5", Groups: []string{"group1001"}, Failed: true}, wantErr: "lookup failed for user: testuser5", wantCalls: 1},
			{advance: time.Second, ugi: true, user: "testuser5", forced: true, want: UserGroup{User: "testuser5", Groups: []string{"nogroup"}, Resolved: 1}, wantCalls: 1},
		}},
		{"forced user that resolves keeps its groups", TestResolver{}, []step{
			{ugi: true, user: "testuser1", forced: true, want: UserGroup{User: "testuser1", Groups: []string{"group1000", "group1001"}}, wantCalls: 1},
		}},
		{"failed lookup without force is returned as is", TestResolver{}, []step{
			{ugi: true, user: "testuser5", want: UserGroup{User: "testuser5", Groups: []string{"group1001"}, Failed: true}, wantErr: "lookup failed for user: testuser5", wantCalls: 1},
			{ugi: true, user: "testuser5", want: UserGroup{User: "testuser5", Groups: []string{"group1001"}, Failed: true}, wantErr: cachedErr(0), wantCalls: 1},
		}},
		{"user name regex is not applied without groups", NoResolver{}, []step{
			{ugi: true, user: "invaliduser><+", want: UserGroup{User: "invaliduser><+", Groups: []string{"invaliduser><+"}}, wantCalls: 1},
		}},
		{"user name regex is applied when groups are given", NoResolver{}, []step{
			{ugi: true, user: "invaliduser><+", groups: []string{"g"}, wantErr: "invalid username, it contains invalid characters"},
			{user: "invaliduser><+", want: UserGroup{User: "invaliduser><+", Groups: []string{"invaliduser><+"}}, wantCalls: 1},
		}},
		{"user name regex is applied after a forced fallback", TestResolver{}, []step{
			{ugi: true, user: "bad user", forced: true, wantErr: "invalid username, it contains invalid characters", wantCalls: 1},
			{ugi: true, user: "bad user", want: UserGroup{User: "bad user", Failed: true}, wantErr: cachedErr(0), wantCalls: 1},
		}},
		{"user name regex accepts service accounts and a trailing dollar", NoResolver{}, []step{
			{ugi: true, user: "system:serviceaccount:ns:sa", groups: []string{"system:authenticated"},
				want: UserGroup{User: "system:serviceaccount:ns:sa", Groups: []string{"system:authenticated"}}},
			{ugi: true, user: "host$", groups: []string{"g"}, want: UserGroup{User: "host$", Groups: []string{"g"}}},
			{ugi: true, user: "1user", groups: []string{"g"}, wantErr: "invalid username, it contains invalid characters"},
		}},
		{"groups are kept verbatim", NoResolver{}, []step{
			{ugi: true, user: "alice", groups: []string{"x", "x", ""}, want: UserGroup{User: "alice", Groups: []string{"x", "x", ""}}},
			{ugi: true, user: "alice", want: UserGroup{User: "alice", Groups: []string{"x", "x", ""}}},
		}},
		{"an empty non-nil group list is resolved", NoResolver{}, []step{
			{ugi: true, user: "alice", groups: []string{}, want: UserGroup{User: "alice", Groups: []string{"alice"}}, wantCalls: 1},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { runSteps(t, tc.r, tc.steps) })
	}
}

// TestConvertUGICopiesGroups pins that the cache keeps its own copy of the
// shim's groups and hands out copies (spec §7.2 step 4).
func TestConvertUGICopiesGroups(t *testing.T) {
	c := NewCache(NoResolver{}, newFakeClock())
	in := []string{"dev", "ops"}
	ug, err := c.ConvertUGI("alice", in, false)
	if err != nil {
		t.Fatal(err)
	}
	in[0] = "changed"
	ug.Groups[1] = "changed"
	got, err := c.GetUserGroup("alice")
	if err != nil || !slices.Equal(got.Groups, []string{"dev", "ops"}) {
		t.Fatalf("GetUserGroup = %q, %v", got.Groups, err)
	}
	got.Groups[0] = "changed"
	if g, _ := c.Groups("alice"); !slices.Equal(g, []string{"dev", "ops"}) {
		t.Errorf("Groups = %q after the caller changed its copy", g)
	}
}

// TestClean pins the cleaner's strict boundaries (spec §7.3; upstream
// TestCacheCleanUp, TestIntervalCacheCleanUp, TestCleanUpCacheUsesRealTime).
func TestClean(t *testing.T) {
	for _, tc := range []struct {
		name    string
		user    string // testuser1 resolves, unknown fails
		age     time.Duration
		survive bool
	}{
		{"positive entry 300 s old survives", "testuser1", 300 * time.Second, true},
		{"positive entry 301 s old is removed", "testuser1", 301 * time.Second, false},
		{"positive entry 31 s old survives", "testuser1", 31 * time.Second, true},
		{"failed entry 30 s old survives", "unknown", 30 * time.Second, true},
		{"failed entry 31 s old is removed", "unknown", 31 * time.Second, false},
		{"failed entry just resolved survives", "unknown", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			c := NewCache(TestResolver{}, clock)
			_, _ = c.GetUserGroup(tc.user)
			clock.Advance(tc.age)
			c.Clean()
			if _, ok := cached(c, tc.user); ok != tc.survive {
				t.Errorf("cached after Clean = %v, want %v", ok, tc.survive)
			}
		})
	}
}

// TestCleanRemovesShimGroups pins that shim-supplied entries age out like
// resolved ones (spec §7.2 step 4: they are positive entries).
func TestCleanRemovesShimGroups(t *testing.T) {
	clock := newFakeClock()
	c := NewCache(TestResolver{}, clock)
	if _, err := c.ConvertUGI("alice", []string{"dev"}, false); err != nil {
		t.Fatal(err)
	}
	clock.Advance(301 * time.Second)
	c.Clean()
	if _, ok := cached(c, "alice"); ok {
		t.Error("shim entry survived 301 s")
	}
}

// TestReset pins that Reset empties the cache, so the next lookup resolves.
func TestReset(t *testing.T) {
	cr := &countingResolver{Resolver: TestResolver{}}
	c := NewCache(cr, newFakeClock())
	_, _ = c.GetUserGroup("testuser1")
	_, _ = c.GetUserGroup("unknown")
	c.Reset()
	if _, err := c.GetUserGroup("unknown"); errText(err) != "lookup failed for user: unknown" {
		t.Errorf("after Reset the failure is still cached: %v", err)
	}
	if n := cr.calls.Load(); n != 3 {
		t.Errorf("%d resolver calls, want 3", n)
	}
}

// TestStartCleaner pins that the cleaner goroutine runs Clean and stops.
func TestStartCleaner(t *testing.T) {
	clock := newFakeClock()
	c := NewCache(TestResolver{}, clock)
	_, _ = c.GetUserGroup("unknown")
	clock.Advance(31 * time.Second)
	stop := c.StartCleaner(time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := cached(c, "unknown"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("cleaner did not remove the failed entry")
		}
		time.Sleep(time.Millisecond)
	}
	stop()
	stop() // a second stop is harmless
	_, _ = c.GetUserGroup("unknown")
	clock.Advance(time.Hour)
	time.Sleep(10 * time.Millisecond)
	if _, ok := cached(c, "unknown"); !ok {
		t.Error("cleaner ran after stop")
	}
}

// TestDefaultCleanerInterval pins YuniKorn's cleaner periods: 1 s for the
// test resolver, 60 s for the rest (spec §7.3).
func TestDefaultCleanerInterval(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Resolver
		want time.Duration
	}{
		{"test resolver cleans every second", TestResolver{}, time.Second},
		{"no-resolver cleans every minute", NoResolver{}, 60 * time.Second},
		{"os resolver cleans every minute", OSResolver{}, 60 * time.Second},
		{"file resolver cleans every minute", &FileResolver{}, 60 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := defaultCleanerInterval(tc.r); got != tc.want {
				t.Errorf("interval = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestNewCacheDefaults pins the nil defaults: the no-resolver and the
// system clock.
func TestNewCacheDefaults(t *testing.T) {
	c := NewCache(nil, nil)
	if c.Resolver().Name() != "none" {
		t.Errorf("resolver = %q, want none", c.Resolver().Name())
	}
	before := time.Now().Unix()
	ug, err := c.GetUserGroup("alice")
	if err != nil || ug.Resolved < before || ug.Resolved > time.Now().Unix() {
		t.Errorf("GetUserGroup = %+v, %v", ug, err)
	}
}

// TestCacheErrorsAreSentinels pins that callers can tell the cache's own
// errors apart with errors.Is.
func TestCacheErrorsAreSentinels(t *testing.T) {
	c := NewCache(TestResolver{}, newFakeClock())
	_, err := c.GetUserGroup("")
	if !errors.Is(err, ErrEmptyUser) {
		t.Errorf("empty user: %v", err)
	}
	_, _ = c.GetUserGroup("unknown")
	if _, err = c.GetUserGroup("unknown"); !errors.Is(err, ErrCachedFailure) {
		t.Errorf("cached failure: %v", err)
	}
	if _, err = c.ConvertUGI("a b", []string{"g"}, false); !errors.Is(err, ErrInvalidUserName) {
		t.Errorf("invalid user: %v", err)
	}
}

// TestCacheConcurrent runs every entry point on one cache from many
// goroutines; run with -race.
func TestCacheConcurrent(t *testing.T) {
	clock := newFakeClock()
	c := NewCache(TestResolver{}, clock)
	stop := c.StartCleaner(time.Millisecond)
	defer stop()
	users := []string{"testuser1", "testuser2", "testuser3", "testuser4", "testuser5", "invalid-gid-user", "unknown", "alice", ""}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				u := users[(g+i)%len(users)]
				switch i % 7 {
				case 0:
					ug, err := c.ConvertUGI(u, []string{"x", u}, false)
					if err == nil && (ug.User != u || !slices.Equal(ug.Groups, []string{"x", u})) {
						t.Errorf("ConvertUGI(%q) = %+v", u, ug)
					}
				case 1:
					_, _ = c.ConvertUGI(u, nil, true)
				case 2:
					c.Clean()
				case 3:
					clock.Advance(time.Second)
				case 4:
					groups, _ := c.Groups(u)
					_ = len(groups)
				default:
					ug, err := c.GetUserGroup(u)
					if u != "" && ug.User != u {
						t.Errorf("GetUserGroup(%q) = %+v, %v", u, ug, err)
					}
					if len(ug.Groups) > 0 {
						ug.Groups[0] = "scribble" // the caller's copy
					}
				}
				if i == 1000 && g == 0 {
					c.Reset()
				}
			}
		}()
	}
	wg.Wait()
}

// cached reports the stored entry for user, bypassing the lookup rules.
func cached(c *Cache, user string) (*UserGroup, bool) {
	v, ok := c.entries.Load(user)
	if !ok {
		return nil, false
	}
	return v.(*UserGroup), true
}

// BenchmarkCachedLookup measures a warm positive hit through Groups, the
// path every policy evaluation takes.
func BenchmarkCachedLookup(b *testing.B) {
	c := NewCache(NoResolver{}, SystemClock{})
	if _, msg := c.Groups("alice"); msg != "" {
		b.Fatal(msg)
	}
	b.ReportAllocs()
	for b.Loop() {
		groups, msg := c.Groups("alice")
		if len(groups) != 1 || msg != "" {
			b.Fatal(groups, msg)
		}
	}
}

// BenchmarkCachedLookupParallel is BenchmarkCachedLookup from every CPU at
// once, where read-lock contention would show.
func BenchmarkCachedLookupParallel(b *testing.B) {
	c := NewCache(NoResolver{}, SystemClock{})
	c.Groups("alice")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if groups, _ := c.Groups("alice"); len(groups) != 1 {
				b.Fatal(groups)
			}
		}
	})
}

// BenchmarkUserGroupsBuiltin measures the builtin's JSON round trip on a
// warm hit.
func BenchmarkUserGroupsBuiltin(b *testing.B) {
	bi := UserGroups(NewCache(TestResolver{}, SystemClock{}))
	arg := []json.RawMessage{json.RawMessage(`"testuser3"`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := bi.Func(arg); err != nil {
			b.Fatal(err)
		}
	}
}

// YuniKorn up to 1.8.0 stamped its cache entries with a package time that
// was never set: no entry ever went stale and the cleaner removed nothing.
// ZeroClock is that clock.
func TestZeroClockCacheNeverExpires(t *testing.T) {
	r := &countingResolver{Resolver: TestResolver{}}
	c := NewCache(r, ZeroClock{})
	if _, err := c.Resolve("testuser1"); err != nil {
		t.Fatal(err)
	}
	_, err := c.Resolve("unknown")
	if err == nil {
		t.Fatal("unknown user resolved")
	}
	c.Clean()
	if _, err := c.Resolve("testuser1"); err != nil || r.calls.Load() != 2 {
		t.Errorf("resolved entry after a clean: %v, %d lookups, want the cached entry (2 lookups)", err, r.calls.Load())
	}
	_, err = c.Resolve("unknown")
	want := "user resolution failed, cached data returned: " + fmt.Sprint(time.Unix(time.Time{}.Unix(), 0))
	if err == nil || err.Error() != want || r.calls.Load() != 2 {
		t.Errorf("failed entry after a clean: %v, %d lookups, want %q from the cache", err, r.calls.Load(), want)
	}
}
