// Package builtins holds aclc's custom builtins, first of all group resolution, as plain Go that every runtime adapter calls.
//
// Group resolution reproduces YuniKorn's security package (pkg/common/security,
// usergroup*.go): a Resolver looks one user up the way YuniKorn's lookup,
// lookupGroupID and groupIds functions do, and a Cache adds YuniKorn's
// UserGroupCache on top (ConvertUGI, GetUserGroup, the positive and negative
// lifetimes and the cleaner). Every adapter — the native engine, OPA's
// evaluator, the Wasm hosts — calls the same Go, so they cannot disagree on
// who is in which group. GroupResolver is the one "user → groups" contract:
// the reference decisions of pkg/acl take it, and every Resolver and the
// Cache satisfy it.
//
// # Notes
//
//   - The package is a leaf: it imports nothing of pkg/acl, Kubernetes or
//     OPA (TestDependencies). The admission policy's own builtins live with
//     pkg/acl/admission, and policy/host lists every builtin the host
//     modules call.
//   - The resolvers "none", "os", "test" and "ldap" are YuniKorn's. "file" is
//     aclc's own: a fixed user → groups table read from an /etc/group-style
//     file or a YAML map, so a policy can be built and tested against known
//     groups without an OS or LDAP lookup. "ldap" reads YuniKorn's secret
//     directory (LoadLDAPConfig) and searches with go-ldap as YuniKorn does;
//     where YuniKorn panics it returns a *PanicError.
//   - Cached group slices are shared, not copied, on the hot path (Cache.Groups);
//     they are never modified after they are stored, and callers must not
//     modify them either.
//   - The cache is per Cache value, not a process-wide singleton as in
//     YuniKorn; each engine owns one, and a program that wants YuniKorn's
//     "first partition decides" behaviour keeps one Cache.
//
// See the YuniKorn reference specification (spec §6.7 and §7) and
// https://github.com/apache/yunikorn-core/tree/master/pkg/common/security.
package builtins
