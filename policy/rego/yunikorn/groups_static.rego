# Group resolution without custom builtins, so the bundle runs on any OPA: YuniKorn's
# "none" rule (the user's only group is the user name), or the entries a static resolver
# (test, file) compiled into the configuration's groups (config.rego). A user missing from the map fails
# the lookup as YuniKorn's resolvers do for an unknown user.
package yunikorn.queues

lookup_groups(user) := {"groups": [user]} if {
	object.get(compiled, "resolver", "none") == "none"
} else := compiled.groups[user] if {
	compiled.groups[user]
} else := {"groups": [], "error": concat("", ["lookup failed for user: ", user])}
