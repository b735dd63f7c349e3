package clienttest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes berthd end with the test binary, even when that is killed
// (a test that times out) before TestMain can stop it.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
