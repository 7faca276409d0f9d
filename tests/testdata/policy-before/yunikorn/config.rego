# Where the queue and placement decisions and the static group lookup read the compiled
# YuniKorn configuration: in a bundle, the data document aclc's translator writes. A
# Gatekeeper library cannot read it there and has its own form of this module, which
# takes the configuration from its input.
package yunikorn.queues

compiled := data.aclc.yunikorn
