# The guard has no reference copy: it came after the rewrite the reference predates, and
# TestDifferential* compares only the decisions the reference has. Here it is YuniKorn's
# answer, so that a bundle of the reference policy still has every entry point.
package yunikorn.admission

# METADATA
# entrypoint: true
guard := review
