# The placement decision's entry point beside the queue decision's, so that both are
# served under yunikorn/queues; the decision itself lives in package yunikorn.placement,
# whose input schema is the placement input's.
package yunikorn.queues

# METADATA
# entrypoint: true
# description: The placement decision; always defined.
placement := data.yunikorn.placement.decision
