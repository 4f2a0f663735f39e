package split

import "github.com/metalplug/metalplug/backend/ir"

// tripCount is the trip count of the while at instruction i of p, when it
// is known before the loop runs.
func tripCount(p *ir.Program, i int) (int, bool) { return 0, false }
