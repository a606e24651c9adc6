package membudget

import "runtime/debug"

// GCPercent is quorum's GOGC, unless the environment sets one. A review
// allocates fast over a large live heap (the types, syntax and IR of the
// packages it analyses), and Go's default of 100 lets the heap grow to
// twice what is live before collecting: at 60, a review of a change to
// caddy peaks at about 440 MB instead of 580, one to nats-server at about
// 870 MB instead of 1,090, for a few per cent more CPU
// (docs/performance.md, "A large repository").
const GCPercent = 60

// SetGCPercent sets the collector's target to GCPercent when GOGC is not
// set; it returns whether it did.
func SetGCPercent(getenv func(string) string) bool {
	if getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(GCPercent)
	return true
}
