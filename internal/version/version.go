// Package version is the version of Berth's programs (berthd, berth and
// terraform-provider-berth), as their --version prints it.
//
// A release build stamps it: `make build` passes
//
//	-ldflags "-X github.com/berthhq/berth/internal/version.Version=$(git describe --tags --always --dirty)"
//
// A build without the stamp (go build, go install, go run) reads what the Go
// toolchain recorded in the binary instead (String).
package version

import (
	"runtime/debug"
	"sync"
)

// Version is set at build with -ldflags "-X github.com/berthhq/berth/internal/version.Version=v1.2.3";
// empty otherwise. Read it through String.
var Version string

// String is the program's version: Version when the build stamped one; otherwise the
// main module's version the toolchain recorded (go install ...@v1.2.3 records
// v1.2.3; a build in a git checkout records a pseudo-version); otherwise "devel",
// with the commit it was built from ("devel-0123456789ab") and "+dirty" when the
// checkout had uncommitted changes.
func String() string {
	if Version != "" {
		return Version
	}
	return fallback()
}

var fallback = sync.OnceValue(func() string { return fromBuildInfo(debug.ReadBuildInfo()) })

// fromBuildInfo is String's answer for a build without Version, from what
// debug.ReadBuildInfo answered.
func fromBuildInfo(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v := "devel"
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev := s.Value
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if rev != "" {
				v += "-" + rev
			}
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty {
		v += "+dirty"
	}
	return v
}
