# Where the user.info review reads its configuration: in a bundle, the settings aclc
# compiled from the yunikorn-configs ConfigMap, and the request's namespace as kube-mgmt
# replicates Namespaces into data.kubernetes.namespaces (undefined when absent). A
# Gatekeeper library has its own form of this module: the settings from its input, the
# namespace from the review or Gatekeeper's synced inventory.
package yunikorn.admission

settings := data.aclc.admission

namespace_object := data.kubernetes.namespaces[namespace]

# The behaviour switches of the YuniKorn release the configuration was compiled for.
release_switches := object.get(object.get(data.aclc, "yunikorn", {}), ["release", "switches"], {})

# The guard's configuration: the parts turned off, and whether the release's scheduler
# reads the username label.
guard_config := object.get(data.aclc, "guard", {})
