# OS-group resolution without custom builtins, so the bundle runs on any OPA: the "none"
# rule (the user's only group is the user name), or the entries a static resolver (test,
# file) compiled into data.aclc.vov.groups. A user the resolver does not know has no
# groups.
package vov.acl

lookup_osgroups(user) := [user] if {
	object.get(data.aclc.vov, "resolver", "none") == "none"
} else := data.aclc.vov.groups[user].groups if {
	data.aclc.vov.groups[user]
} else := []
