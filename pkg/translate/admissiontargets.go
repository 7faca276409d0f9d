package translate

// The decisions the admission targets (gatekeeper, kubernetes) write, each
// as objects of their own: --decisions names them.
const (
	// GatekeeperUserInfo is the user.info check (YuniKornUserInfo).
	GatekeeperUserInfo = "user-info"
	// GatekeeperQueue is the placement at admission (YuniKornQueue).
	GatekeeperQueue = "queue"
)

// GatekeeperDecisions returns the values --decisions takes.
func GatekeeperDecisions() []string { return []string{GatekeeperUserInfo, GatekeeperQueue} }
