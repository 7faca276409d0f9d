# The queue decision's entry point beside the user.info review's, so that both are
# served under yunikorn/admission; the decision itself lives in package
# yunikorn.admission_queue.
package yunikorn.admission

# METADATA
# entrypoint: true
# description: The placement of a pod's application at admission; always defined.
queue := data.yunikorn.admission_queue.review
