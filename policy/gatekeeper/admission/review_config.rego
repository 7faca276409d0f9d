# The user.info review's configuration, in a Gatekeeper library: the settings come in the
# library's input (the template builds them from the Constraint's parameters).
package yunikorn.admission

settings := input.settings

# The behaviour switches of the YuniKorn release the library decides as (the template
# passes them).
release_switches := object.get(input, ["yunikorn", "release", "switches"], {})

# The namespace of the request: Gatekeeper attaches it to the review as namespaceObject;
# a sync config replicates it into data.inventory. Absent, the settings decide.
namespace_object := o if {
	o := input.namespace_object
	is_object(o)
	o.metadata.name == namespace
} else := o if {
	o := data.inventory.cluster.v1.Namespace[namespace]
	is_object(o)
}

# The guard's configuration (the template passes it): the parts turned off, and whether
# the release's scheduler reads the username label.
guard_config := object.get(input, "guard", {})
