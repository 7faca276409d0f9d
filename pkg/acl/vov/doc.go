// Package vov holds the reference semantics of VOV (Altair Accelerator) access control: object ACLs of (agent, capabilities) entries, the vovacl AGENTS and CAPABILITIES tables, roles from security.tcl, and the vov/acl/decision.
//
// It is plain Go and is the oracle the Rego decision vov/acl/decision is
// compared with. The source is an aclc YAML file (a top-level vov: key)
// describing the project, its objects with their owners and ACLs, VOV user
// groups, FairShare membership, and the role rules (a real security.tcl,
// inline text, or structured roles:).
//
// # Notes
//
//   - VOV is closed source; every rule rests on Altair's public pages as
//     pinned in spec/vov-acls.md, and where they contradict one another the
//     choice is written in docs/RATIONALE.md ("VOV" section).
//   - The vovacl tables are data (AgentHonour, CapabilityMeaning): an agent
//     marked "n" for a type never matches there; a capability marked "n/a"
//     still decides by plain set membership and is only warned about.
//
// See https://help.altair.com/accelerator/html/commands/topics/commands/vovacl.htm
package vov
