# Group resolution through aclc's host builtin aclc.user_groups, which applies the
# configured resolver (none, os, test, file) behind YuniKorn's cache. Bundles with this
# module need a runtime that registers the builtin: aclc's engines, aclc serve, or an OPA
# built with aclc's builtins. Stock OPA refuses them (undefined function).
package yunikorn.queues

lookup_groups(user) := aclc.user_groups(user)
