package builtins

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aclc-dev/aclc/internal/inputfile"
	"github.com/go-ldap/ldap/v3"
)

// LDAPSecretsDir is where YuniKorn reads its LDAP configuration
// (common.LdapMountPath): a Kubernetes Secret mounted as a directory, one
// file per key.
const LDAPSecretsDir = "/run/secrets/ldap"

// The keys of the LDAP configuration, one file each, spelled exactly (and
// case-sensitively) as YuniKorn reads them.
const (
	LDAPHost         = "Host"
	LDAPPort         = "Port"
	LDAPBaseDN       = "BaseDN"
	LDAPFilter       = "Filter"
	LDAPGroupAttr    = "GroupAttr"
	LDAPReturnAttr   = "ReturnAttr"
	LDAPBindUser     = "BindUser"
	LDAPBindPassword = "BindPassword"
	LDAPInsecure     = "Insecure"
	LDAPSSL          = "SSL"
)

// ldapRequiredKeys must each come from a file that passed its check;
// YuniKorn's defaults do not count.
var ldapRequiredKeys = []string{LDAPHost, LDAPPort, LDAPBaseDN, LDAPFilter, LDAPGroupAttr, LDAPReturnAttr, LDAPBindUser, LDAPBindPassword}

// ldapUserUID is the uid YuniKorn's LDAP lookup gives every user
// (common.DefaultLdapUserUID); the primary group is the user name.
const ldapUserUID = "1211"

// ErrLDAPConfig is returned, wrapped with the per-key messages, when the
// LDAP configuration does not load: YuniKorn logs a Fatal message and
// panics with "LDAP configuration not found or invalid" at startup.
var ErrLDAPConfig = errors.New("unable to properly load LDAP configuration")

// Secret is a value that must never be printed or logged: every fmt verb
// and every encoding shows it as "[redacted]".
type Secret string

const redacted = "[redacted]"

// String implements fmt.Stringer.
func (Secret) String() string { return redacted }

// GoString implements fmt.GoStringer.
func (Secret) GoString() string { return redacted }

// Format implements fmt.Formatter, so that no verb (%s, %q, %x, %d...) shows the value.
func (Secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redacted) }

// MarshalText implements encoding.TextMarshaler (and so JSON and YAML).
func (Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// LDAPConfig is YuniKorn's LdapConfig: what the resolver dials, binds as
// and searches for. The password is a Secret.
type LDAPConfig struct {
	Host         string
	Port         int
	BaseDN       string
	Filter       string
	GroupAttr    string   // validated, never used: YuniKorn reads memberOf whatever this says
	ReturnAttr   []string // split on "," without trimming
	BindUser     string
	BindPassword Secret
	Insecure     bool // skip certificate verification (ldaps only)
	SSL          bool // ldaps:// instead of ldap://
}

// DefaultLDAPConfig returns YuniKorn's defaults, which apply to a key whose
// file is absent or rejected (the load then fails unless the key is Insecure
// or SSL).
func DefaultLDAPConfig() LDAPConfig {
	return LDAPConfig{
		Host: "localhost", Port: 389, BaseDN: "dc=example,dc=com", Filter: "(&(sAMAccountName=%s))",
		GroupAttr: "memberOf", ReturnAttr: []string{"memberOf"}, BindUser: "admin", BindPassword: "admin",
	}
}

// URL is the address YuniKorn dials: ldap://host:port, or ldaps:// with
// SSL. The host is used as written, so an IPv6 address needs brackets.
func (c LDAPConfig) URL() string {
	scheme := "ldap"
	if c.SSL {
		scheme = "ldaps"
	}
	return fmt.Sprintf("%s://%s:%d", scheme, c.Host, c.Port)
}

// LDAPIssue is one message of loading an LDAP configuration directory: a
// file YuniKorn rejects (and skips), a missing key, or a finding of
// YuniKorn's whole-configuration validator. Error issues make the load
// fail; the others YuniKorn only logs.
type LDAPIssue struct {
	Key   string // the file (key) it is about, or "" for the whole directory
	Msg   string // YuniKorn's message
	Error bool
}

func (i LDAPIssue) String() string {
	if i.Key == "" {
		return i.Msg
	}
	return i.Key + ": " + i.Msg
}

// LoadLDAPConfig reads a directory of key files the way YuniKorn reads
// /run/secrets/ldap (ReadLdapConfig and its validator, spec placement §6.2):
// entries whose names start with ".." and directories are skipped, every
// value is trimmed of surrounding white space, each key is checked on its
// own and skipped when it fails, and the load fails when no file was
// accepted or any of the eight non-boolean keys was not. The issues list
// every rejected file, every missing key and every validator finding, in
// that order; none of them quotes a file's content (YuniKorn's messages
// that do are cut before the value: the key names the file), and a file
// that is not a regular one of at most MaxSecretFile bytes is refused
// unread. On failure the error wraps
// ErrLDAPConfig and repeats the error issues.
func LoadLDAPConfig(dir string) (LDAPConfig, []LDAPIssue, error) {
	cfg := DefaultLDAPConfig()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return cfg, nil, fmt.Errorf("%w: unable to access LDAP secrets directory under %s", ErrLDAPConfig, dir)
	}
	var issues []LDAPIssue
	accepted := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "..") || e.IsDir() {
			continue
		}
		raw, err := inputfile.ReadFile(filepath.Join(dir, name), MaxSecretFile)
		if err != nil {
			// A read error names the path, never the content.
			issues = append(issues, LDAPIssue{Key: name, Msg: "could not read secret file: " + err.Error()})
			continue
		}
		if err := cfg.set(name, strings.TrimSpace(string(raw))); err != nil {
			issues = append(issues, LDAPIssue{Key: name, Msg: err.Error()})
			continue
		}
		accepted[name] = true
	}
	var missing []string
	for _, k := range ldapRequiredKeys {
		if !accepted[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		issues = append(issues, LDAPIssue{Msg: "missing required LDAP configuration fields: " + strings.Join(missing, ", "), Error: true})
	}
	if len(accepted) == 0 {
		issues = append(issues, LDAPIssue{Msg: "no LDAP secret was loaded from " + dir, Error: true})
	}
	issues = append(issues, cfg.validate()...)
	var errs []string
	for _, i := range issues {
		if i.Error {
			errs = append(errs, i.String())
		}
	}
	if len(errs) > 0 {
		// The rejected files say why a key is missing: name them too.
		for _, i := range issues {
			if !i.Error && i.Key != "" && slices.Contains(ldapRequiredKeys, i.Key) {
				errs = append(errs, i.String())
			}
		}
		return cfg, issues, fmt.Errorf("%w from %s: %s", ErrLDAPConfig, dir, strings.Join(errs, "; "))
	}
	return cfg, issues, nil
}

// set is YuniKorn's ValidateSecretValue for one key, applied to c.
func (c *LDAPConfig) set(key, value string) error {
	switch key {
	case LDAPHost, LDAPBaseDN, LDAPGroupAttr, LDAPBindUser, LDAPBindPassword:
		if value == "" {
			return fmt.Errorf("%s cannot be empty", lowerFirst(key))
		}
		switch key {
		case LDAPHost:
			c.Host = value
		case LDAPBaseDN:
			c.BaseDN = value
		case LDAPGroupAttr:
			c.GroupAttr = value
		case LDAPBindUser:
			c.BindUser = value
		case LDAPBindPassword:
			c.BindPassword = Secret(value)
		}
	case LDAPPort:
		port, err := strconv.Atoi(value)
		if err != nil {
			return fmt.Errorf("invalid port number: %s", withoutValue(err))
		}
		if port < 1 || port > 65535 {
			return fmt.Errorf("port must be between 1 and 65535, got: %d", port)
		}
		c.Port = port
	case LDAPFilter:
		switch {
		case value == "":
			return errors.New("filter cannot be empty")
		case !strings.Contains(value, "%s"):
			return errors.New("filter must contain '%s' placeholder for username substitution")
		case !balancedParentheses(value):
			return errors.New("filter has unbalanced parentheses")
		}
		c.Filter = value
	case LDAPReturnAttr:
		if value == "" {
			return errors.New("returnAttr cannot be empty")
		}
		c.ReturnAttr = strings.Split(value, ",")
	case LDAPInsecure, LDAPSSL:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("invalid boolean value: %s", withoutValue(err))
		}
		if key == LDAPInsecure {
			c.Insecure = b
		} else {
			c.SSL = b
		}
	default:
		return fmt.Errorf("unknown LDAP secret key: %s", key)
	}
	return nil
}

// MaxSecretFile bounds one file of an LDAP secret directory: the API
// server caps a whole Secret at 1 MiB, and a value is a host name, a DN or
// a password.
const MaxSecretFile = 1 << 20

// withoutValue is a strconv error without the text it parsed: YuniKorn's
// message quotes the file's content, and a secret file can hold anything
// (a password, or a symlink to another file altogether).
func withoutValue(err error) string {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return "strconv." + ne.Func + ": " + ne.Err.Error()
	}
	return "not a valid value"
}

// lowerFirst spells a key as YuniKorn's per-key messages do ("bindUser").
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

func balancedParentheses(s string) bool {
	n := 0
	for _, r := range s {
		switch r {
		case '(':
			n++
		case ')':
			n--
			if n < 0 {
				return false
			}
		}
	}
	return n == 0
}

var (
	ldapHostnameRE = regexp.MustCompile(`^(([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]*[a-zA-Z0-9])\.)*([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9\-]*[A-Za-z0-9])$`)
	ldapDNRE       = regexp.MustCompile(`^(?:(?:[a-zA-Z0-9]+=[^,]+)(?:,(?:[a-zA-Z0-9]+=[^,]+))*)?$`)
	ldapFilterRE   = regexp.MustCompile(`^\(.*\)$`)
	ldapAttrRE     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9\-_]*$`)
	ldapUserRE     = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9\._\-@]*$`)
)

// validate is YuniKorn's LdapValidator.ValidateConfig over the merged
// configuration. After the per-key checks its errors cannot fire; its
// warnings are what YuniKorn logs.
func (c LDAPConfig) validate() []LDAPIssue {
	var out []LDAPIssue
	add := func(key, msg string, isErr bool) { out = append(out, LDAPIssue{Key: key, Msg: msg, Error: isErr}) }
	switch {
	case c.Host == "":
		add(LDAPHost, "Host cannot be empty", true)
	case net.ParseIP(c.Host) == nil && !ldapHostnameRE.MatchString(c.Host):
		add(LDAPHost, "Invalid hostname format", false)
	}
	if c.Port < 1 || c.Port > 65535 {
		add(LDAPPort, fmt.Sprintf("Port must be between 1 and 65535, got: %d", c.Port), true)
	}
	if c.BaseDN == "" {
		add(LDAPBaseDN, "BaseDN cannot be empty", true)
	} else {
		if !strings.Contains(strings.ToLower(c.BaseDN), "dc=") {
			add(LDAPBaseDN, "BaseDN should contain at least one domain component (dc=)", false)
		}
		if !ldapDNRE.MatchString(c.BaseDN) {
			add(LDAPBaseDN, "Invalid DN format", false)
		}
	}
	if c.Filter == "" {
		add(LDAPFilter, "Filter cannot be empty", true)
	} else {
		if !strings.Contains(c.Filter, "%s") {
			add(LDAPFilter, "Filter must contain '%s' placeholder for username substitution", true)
		}
		if !balancedParentheses(c.Filter) {
			add(LDAPFilter, "Filter has unbalanced parentheses", true)
		}
		if !ldapFilterRE.MatchString(c.Filter) {
			add(LDAPFilter, "Filter should be enclosed in parentheses", false)
		}
	}
	if c.GroupAttr == "" {
		add(LDAPGroupAttr, "GroupAttr cannot be empty", true)
	} else if !ldapAttrRE.MatchString(c.GroupAttr) {
		add(LDAPGroupAttr, "Invalid attribute name format", false)
	}
	if len(c.ReturnAttr) == 0 {
		add(LDAPReturnAttr, "ReturnAttr cannot be empty", true)
	}
	for i, a := range c.ReturnAttr {
		if !ldapAttrRE.MatchString(a) {
			add(LDAPReturnAttr, fmt.Sprintf("Invalid attribute name format (attribute %d of %d)", i+1, len(c.ReturnAttr)), false)
		}
	}
	switch {
	case c.BindUser == "":
		add(LDAPBindUser, "BindUser cannot be empty", true)
	case !ldapDNRE.MatchString(c.BindUser) && !ldapUserRE.MatchString(c.BindUser):
		add(LDAPBindUser, "BindUser is neither a valid DN nor a valid username", false)
	}
	switch {
	case c.BindPassword == "":
		add(LDAPBindPassword, "BindPassword cannot be empty", true)
	case len(c.BindPassword) < 3:
		add(LDAPBindPassword, "BindPassword is too short", false)
	}
	if c.SSL && c.Port != 636 {
		add(LDAPPort, fmt.Sprintf("SSL is enabled but port is not the default LDAPS port (636), using: %d", c.Port), false)
	}
	if c.SSL && c.Insecure {
		add("SSL/Insecure", "Both SSL and Insecure are enabled, which may indicate a security misconfiguration", false)
	}
	return out
}

// LDAPResolver is YuniKorn's LDAP resolver (usergroup_ldap_resolver.go):
// every user exists, the user name is the primary group, and the other
// groups come from one search per lookup — dial, bind, search, close.
//
// # Notes
//
// It reproduces YuniKorn where that changes an answer:
//   - The user name is put into Filter with fmt.Sprintf, unescaped: "*",
//     "(", ")" and "\" reach the server, so user "c*" gets the groups of
//     every entry the wildcard matches.
//   - Only the attribute named exactly "memberOf" is read, whatever
//     GroupAttr says. Each value is cut at the first ",", and the group is
//     what follows the literal upper-case "CN=" in that piece: "CN=a\,b,..."
//     gives "a\", "xCN=y" gives "y".
//   - A value whose first piece has no "CN=" (cn=Devs,..., OU=x, "") makes
//     YuniKorn panic with an index out of range. Resolve returns a
//     *PanicError instead; the cache does not store it and a forced request
//     does not fall back to nogroup: the decision is a denial.
//   - Errors of dial, bind and search are go-ldap's, verbatim.
//
// It departs from YuniKorn in one way, which changes no answer YuniKorn
// gives in time: every lookup is bounded. YuniKorn dials with a 60 s
// timeout and sets no request timeout, so a directory that accepts the
// connection and never answers holds the lookup for as long as the
// connection lives. Here connecting is bounded by Timeouts().Dial, the
// bind and the search together by Timeouts().Request, and the whole lookup
// by the caller's context (ResolveContext). A lookup that runs out of time
// fails like any unreachable directory, and is cached as failed; one whose
// caller gave up is not cached at all.
//
// See the placement specification §6 and
// https://github.com/apache/yunikorn-core/blob/master/pkg/common/security/usergroup_ldap_resolver.go.
type LDAPResolver struct {
	cfg      LDAPConfig
	dir      string
	timeouts LDAPTimeouts
}

// The bounds of one LDAP lookup unless the resolver is given others
// (--resolver ldap=DIR,dial-timeout=D,timeout=D). A directory answers in
// milliseconds; together they stay under the default decision deadlines
// of aclc webhook (2 s) and aclc serve (5 s), so that a directory that does not
// answer fails the lookup, which is then cached as failed and the decision
// denied with its error, rather than the decision itself running out of
// time on every request.
const (
	DefaultLDAPDialTimeout    = time.Second
	DefaultLDAPRequestTimeout = time.Second
)

// LDAPTimeouts bound one lookup. They are aclc's own settings, not keys of
// YuniKorn's secret, which has none (an unknown key there is an issue).
type LDAPTimeouts struct {
	// Dial bounds connecting: TCP, and the TLS handshake of ldaps.
	Dial time.Duration
	// Request bounds the bind and the search together, once connected.
	Request time.Duration
}

// DefaultLDAPTimeouts returns DefaultLDAPDialTimeout and DefaultLDAPRequestTimeout.
func DefaultLDAPTimeouts() LDAPTimeouts {
	return LDAPTimeouts{Dial: DefaultLDAPDialTimeout, Request: DefaultLDAPRequestTimeout}
}

// orDefault replaces each non-positive bound by its default.
func (t LDAPTimeouts) orDefault() LDAPTimeouts {
	if t.Dial <= 0 {
		t.Dial = DefaultLDAPDialTimeout
	}
	if t.Request <= 0 {
		t.Request = DefaultLDAPRequestTimeout
	}
	return t
}

// NewLDAPResolver returns a resolver for a configuration that loaded, with
// DefaultLDAPTimeouts.
func NewLDAPResolver(cfg LDAPConfig) *LDAPResolver {
	return &LDAPResolver{cfg: cfg, timeouts: DefaultLDAPTimeouts()}
}

// LoadLDAPResolver reads dir with LoadLDAPConfig and returns its resolver,
// with DefaultLDAPTimeouts.
func LoadLDAPResolver(dir string) (*LDAPResolver, error) {
	cfg, _, err := LoadLDAPConfig(dir)
	if err != nil {
		return nil, err
	}
	return &LDAPResolver{cfg: cfg, dir: dir, timeouts: DefaultLDAPTimeouts()}, nil
}

// WithTimeouts returns a copy of r bounded by t; a non-positive bound in t
// is its default.
func (r *LDAPResolver) WithTimeouts(t LDAPTimeouts) *LDAPResolver {
	out := *r
	out.timeouts = t.orDefault()
	return &out
}

// Timeouts returns the bounds of one lookup.
func (r *LDAPResolver) Timeouts() LDAPTimeouts { return r.timeouts.orDefault() }

// Name implements Resolver.
func (*LDAPResolver) Name() string { return ResolverLDAP }

// Config returns the configuration (its password stays a Secret).
func (r *LDAPResolver) Config() LDAPConfig { return r.cfg }

// Dir is the directory the configuration was read from, "" if none.
func (r *LDAPResolver) Dir() string { return r.dir }

// String describes the resolver without its password.
func (r *LDAPResolver) String() string {
	return fmt.Sprintf("ldap %s base %q filter %q as %q", r.cfg.URL(), r.cfg.BaseDN, r.cfg.Filter, r.cfg.BindUser)
}

// Resolve implements Resolver: ResolveContext without a caller to give up.
func (r *LDAPResolver) Resolve(name string) ([]string, error) {
	return r.ResolveContext(context.Background(), name)
}

// ResolveContext implements ContextResolver: the lookup stops waiting for
// the directory when ctx is done, and its error then wraps ctx's cause.
func (r *LDAPResolver) ResolveContext(ctx context.Context, name string) ([]string, error) {
	return lookupFuncs{
		lookup: func(name string) (*user.User, error) {
			return &user.User{Uid: ldapUserUID, Gid: name, Username: name}, nil
		},
		lookupGroupID: func(gid string) (*user.Group, error) { return &user.Group{Gid: gid, Name: gid}, nil },
		groupIDs:      func(u *user.User) ([]string, error) { return r.groupIDs(ctx, u) },
	}.resolve(name)
}

// groupIDs is YuniKorn's LDAPLookupGroupIds: the search, then each memberOf
// value cut as YuniKorn cuts it.
func (r *LDAPResolver) groupIDs(ctx context.Context, u *user.User) (groups []string, err error) {
	sr, err := r.search(ctx, u.Username)
	if err != nil {
		return nil, err
	}
	for _, entry := range sr.Entries {
		for _, v := range entry.GetAttributeValues("memberOf") {
			g, err := memberOfGroup(v, entry.DN)
			if err != nil {
				return nil, err
			}
			groups = append(groups, g)
		}
	}
	return groups, nil
}

// memberOfGroup is YuniKorn's strings.Split(strings.Split(v, ",")[0], "CN=")[1],
// with the runtime panic of a missing "CN=" turned into a *PanicError.
func memberOfGroup(value, dn string) (group string, err error) {
	defer func() {
		if p := recover(); p != nil {
			re, ok := p.(runtime.Error)
			if !ok {
				panic(p)
			}
			err = &PanicError{Cause: re.Error(), Detail: fmt.Sprintf("memberOf value %q of %s has no upper-case CN= before its first comma", value, dn)}
		}
	}()
	first := strings.Split(value, ",")[0]
	return strings.Split(first, "CN=")[1], nil
}

// search is YuniKorn's ldapSearch: one connection per lookup, each step
// bounded (see LDAPResolver).
func (r *LDAPResolver) search(ctx context.Context, name string) (*ldap.SearchResult, error) {
	c, t := r.cfg, r.Timeouts()
	conn, err := r.dial(ctx, t.Dial)
	var ne net.Error
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, abandoned(ctx)
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		// Not wrapped: the time that ran out is the directory's, not the
		// caller's. (A TLS handshake that times out says only "context
		// deadline exceeded".)
		return nil, ldap.NewError(ldap.ErrorNetwork, fmt.Errorf("ldap: no connection to %s within %s: %v", c.URL(), t.Dial, err))
	default:
		return nil, ldap.NewError(ldap.ErrorNetwork, err) // as go-ldap's DialURL
	}
	l := ldap.NewConn(conn, c.SSL)
	l.Start()
	defer l.Close()
	// go-ldap's requests take no context: closing the connection under them
	// is what ends a bind or a search that waits, whether the time is up or
	// the caller has gone.
	rctx, cancel := context.WithTimeout(ctx, t.Request)
	defer cancel()
	defer context.AfterFunc(rctx, func() { _ = conn.Close() })()
	res, err := r.bindAndSearch(l, name)
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return nil, abandoned(ctx)
	case rctx.Err() != nil:
		return nil, ldap.NewError(ldap.ErrorNetwork, fmt.Errorf("ldap: no answer from %s within %s", c.URL(), t.Request))
	}
	return nil, err
}

// dial connects as go-ldap's DialURL does for ldap:// and ldaps://, with
// the caller's context and the dial timeout (TLS handshake included).
func (r *LDAPResolver) dial(ctx context.Context, timeout time.Duration) (net.Conn, error) {
	c := r.cfg
	u, err := url.Parse(c.URL())
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil { // go-ldap takes it for a missing port
		host, port = u.Host, ""
	}
	if port == "" {
		port = ldap.DefaultLdapPort
		if c.SSL {
			port = ldap.DefaultLdapsPort
		}
	}
	addr := net.JoinHostPort(host, port)
	d := &net.Dialer{Timeout: timeout}
	if !c.SSL {
		return d.DialContext(ctx, "tcp", addr)
	}
	// #nosec G402 -- YuniKorn's Insecure key, reproduced.
	td := &tls.Dialer{NetDialer: d, Config: &tls.Config{InsecureSkipVerify: c.Insecure}}
	return td.DialContext(ctx, "tcp", addr)
}

func (r *LDAPResolver) bindAndSearch(l *ldap.Conn, name string) (*ldap.SearchResult, error) {
	c := r.cfg
	if err := l.Bind(c.BindUser, string(c.BindPassword)); err != nil {
		return nil, err
	}
	return l.Search(ldap.NewSearchRequest(
		c.BaseDN, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		fmt.Sprintf(c.Filter, name), // unescaped, as YuniKorn
		c.ReturnAttr, nil,
	))
}

// abandoned is the error of a lookup whose caller gave up: a network error
// like the others, wrapping the context's cause so that the cache can tell
// it from an answer about the directory.
func abandoned(ctx context.Context) error {
	return ldap.NewError(ldap.ErrorNetwork, fmt.Errorf("ldap: lookup abandoned: %w", context.Cause(ctx)))
}

// PanicError is a lookup on which YuniKorn itself would panic. aclc
// answers a denial with this error instead, and never caches it.
type PanicError struct {
	Cause  string // the Go runtime error YuniKorn dies with
	Detail string // what in the directory caused it
}

func (e *PanicError) Error() string {
	return "YuniKorn would panic (the scheduler stops): " + e.Cause + ": " + e.Detail
}

// YuniKornPanic returns the runtime error text; packages that must not
// import this one find it with errors.As on an interface.
func (e *PanicError) YuniKornPanic() string { return e.Cause }

// LDAPQuirk is a behaviour of YuniKorn's LDAP resolver that changes answers
// and is worth a warning wherever the resolver is selected.
type LDAPQuirk struct {
	Code string
	Msg  string
}

// Codes of LDAPQuirks (also aclc check's diagnostic codes).
const (
	QuirkLDAPFilterUnescaped = "ldap-filter-unescaped"
	QuirkLDAPCNParsing       = "ldap-cn-parsing"
	QuirkLDAPGroupAttrUnused = "ldap-groupattr-unused"
	QuirkLDAPReturnAttr      = "ldap-returnattr"
	QuirkLDAPConfig          = "ldap-config"
)

// Quirks lists YuniKorn's LDAP behaviours that apply to this configuration.
func (c LDAPConfig) Quirks() []LDAPQuirk {
	out := []LDAPQuirk{
		{QuirkLDAPFilterUnescaped, fmt.Sprintf("the user name is put into Filter %q without RFC 4515 escaping: a user name holding *, (, ) or \\ changes the search (user c* gets the groups of every entry whose name starts with c), and a user name is not checked when the request has no groups", c.Filter)},
		{QuirkLDAPCNParsing, `each memberOf value is cut at its first comma and the group is what follows the literal upper-case "CN=" ("CN=a\,b,..." gives "a\"); a value without "CN=" there (lower-case cn=, OU=, an overlay's normalised DN) makes YuniKorn panic and stop: aclc denies that request instead`},
	}
	if c.GroupAttr != "memberOf" {
		out = append(out, LDAPQuirk{QuirkLDAPGroupAttrUnused, fmt.Sprintf("GroupAttr is %q but YuniKorn never uses it: groups come from the attribute named exactly memberOf", c.GroupAttr)})
	}
	hasMemberOf := false
	for _, a := range c.ReturnAttr {
		if a != strings.TrimSpace(a) {
			out = append(out, LDAPQuirk{QuirkLDAPReturnAttr, fmt.Sprintf("ReturnAttr is split on commas without trimming: attribute %q is requested with its spaces", a)})
		}
		hasMemberOf = hasMemberOf || strings.EqualFold(a, "memberOf") || a == "*"
	}
	if !hasMemberOf {
		out = append(out, LDAPQuirk{QuirkLDAPReturnAttr, fmt.Sprintf("ReturnAttr %q does not request memberOf: every user's only group is the user name", strings.Join(c.ReturnAttr, ","))})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Code < out[j].Code })
	return out
}
