# OS-group resolution through aclc's host builtin aclc.user_groups, which applies the
# configured resolver (none, os, test, file) behind the process-wide cache. Bundles with
# this module need a runtime that registers the builtin (aclc's engines, aclc serve).
package vov.acl

lookup_osgroups(user) := aclc.user_groups(user).groups
