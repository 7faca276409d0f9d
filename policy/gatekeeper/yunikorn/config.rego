# The compiled YuniKorn configuration, in a Gatekeeper library: the template's entry module
# passes it as input.yunikorn, since a library may not read data.aclc.
package yunikorn.queues

compiled := input.yunikorn
