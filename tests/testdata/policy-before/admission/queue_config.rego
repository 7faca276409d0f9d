# Where the queue decision at admission reads its configuration: in a bundle, the two
# scheduler settings aclc compiled, and the placement's input is the application alone
# (the placement reads the queue configuration from data). A Gatekeeper library has its
# own form of this module, which passes both on from its input.
package yunikorn.admission_queue

flags := object.get(data.aclc, "admission_queue", {})

# The behaviour switches of the YuniKorn release the configuration was compiled for.
release_switches := object.get(object.get(data.aclc, "yunikorn", {}), ["release", "switches"], {})

placement_input(application) := {"partition": "default", "application": application}
