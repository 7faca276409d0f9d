# A policy whose values JSON cannot hold as they are: the examples of
# Entrypoint.EvalValue and Config.WithValueBuiltins read it, built by
# go generate into testdata/sets-wasm.tar.gz.
package sets

# members is everyone the input names, as a set.
members contains u if some u in input.users

members contains u if some u in input.admins

# ratio is written as Rego allows a number to be, .5.
ratio := .5

# covered is whether every wanted capability is granted: object.subset is
# one of the builtins the host serves.
covered := object.subset(input.granted, input.wanted)
