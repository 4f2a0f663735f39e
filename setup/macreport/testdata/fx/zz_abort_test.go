package fx

import (
	"os"
	"syscall"
	"testing"
)

func TestAbort(t *testing.T) {
	if os.Getenv("SIDE") == "abort" {
		t.Run("inner", func(t *testing.T) {
			os.Stderr.WriteString("-[MPSGraph foo]: failed assertion `bar'\n")
			syscall.Kill(os.Getpid(), syscall.SIGABRT)
			select {}
		})
	}
}
