package metal

import (
	"testing"

	"github.com/metalplug/metalplug/backend/driver/drivertest"
)

func TestExecuteWaitInline(t *testing.T) { drivertest.CheckExecuteWaitInline(t, open(t, Options{})) }

// BenchmarkDispatch is one tiny kernel's trip through the stream, on the
// GPU on a Mac and on the model of MPSGraph elsewhere.
func BenchmarkDispatch(b *testing.B) { drivertest.BenchmarkDispatch(b, open(b, Options{})) }
