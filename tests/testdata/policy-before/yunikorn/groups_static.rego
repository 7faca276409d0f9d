# Group resolution without custom builtins, so the bundle runs on any OPA: YuniKorn's
# "none" rule (the user's only group is the user name), or the entries a static resolver
# (test, file) compiled into data.aclc.yunikorn.groups. A user missing from the map fails
# the lookup as YuniKorn's resolvers do for an unknown user.
package yunikorn.queues

lookup_groups(user) := {"groups": [user]} if {
	object.get(data.aclc.yunikorn, "resolver", "none") == "none"
} else := data.aclc.yunikorn.groups[user] if {
	data.aclc.yunikorn.groups[user]
} else := {"groups": [], "error": concat("", ["lookup failed for user: ", user])}
