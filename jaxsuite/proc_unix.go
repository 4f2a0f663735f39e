//go:build unix

package jaxsuite

import (
	"os/exec"
	"syscall"
)

// killGroup makes cmd the leader of a process group and its cancellation
// kill the whole group, so that pytest-xdist's workers go with pytest.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
