//go:build !linux

package clienttest

import "os/exec"

// dieWithParent: only Linux can tie a child's life to its parent's; elsewhere
// TestMain stops berthd when the tests end.
func dieWithParent(*exec.Cmd) {}

// ownGroup: elsewhere a script's context kills the script alone; its own trap
// stops its berthd.
func ownGroup(*exec.Cmd) {}
