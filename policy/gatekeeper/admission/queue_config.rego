# The queue decision's configuration, in a Gatekeeper library: the scheduler flags come in
# the library's input, and the placement gets the compiled queue configuration in its
# input too, since it cannot read it from data.
package yunikorn.admission_queue

flags := object.get(input, "flags", {})

# The behaviour switches of the YuniKorn release the configuration was compiled for.
release_switches := object.get(input, ["yunikorn", "release", "switches"], {})

placement_input(application) := {"partition": "default", "application": application, "yunikorn": input.yunikorn}
