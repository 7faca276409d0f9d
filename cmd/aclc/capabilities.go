package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/aclc-dev/aclc/builtins/opabuiltins"
	"github.com/aclc-dev/aclc/pkg/translate"
)

const capabilitiesExamples = `  aclc capabilities > aclc-capabilities.json
  opa build --capabilities aclc-capabilities.json -b bundle/   # stock opa compiles policies that call aclc's builtins
`

func newCapabilitiesCommand() *cobra.Command {
	cmd := newCommand("capabilities", "print OPA capabilities JSON including aclc's builtins", capabilitiesExamples,
		func(cmd *cobra.Command, args []string) int {
			if len(args) != 0 {
				return usageErr(cmd, "takes no arguments")
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			if err := enc.Encode(opabuiltins.Capabilities(translate.HostBuiltins)); err != nil {
				errorf(cmd.ErrOrStderr(), "%v", err)
				return exitError
			}
			return exitOK
		})
	return cmd
}
