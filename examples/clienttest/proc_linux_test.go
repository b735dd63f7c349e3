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

// ownGroup runs cmd in a process group of its own, killed whole when its context
// ends: a script's background berthd with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
