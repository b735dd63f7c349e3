package version

import (
	"runtime/debug"
	"testing"
)

// TestFromBuildInfo: what an unstamped build says, from each kind of build info the
// toolchain records.
func TestFromBuildInfo(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	info := func(version string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/berthhq/berth", Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "devel"},
		{"go install of a tag", info("v1.2.3"), true, "v1.2.3"},
		{"a pseudo-version", info("v0.0.0-20261127182921-0123456789ab+dirty"), true, "v0.0.0-20261127182921-0123456789ab+dirty"},
		{"devel with its commit", info("(devel)", "vcs", "git", "vcs.revision", rev, "vcs.modified", "false"), true, "devel-0123456789ab"},
		{"devel with its commit, changed", info("(devel)", "vcs.revision", rev, "vcs.modified", "true"), true, "devel-0123456789ab+dirty"},
		{"devel, a short revision", info("(devel)", "vcs.revision", "abc"), true, "devel-abc"},
		{"devel without vcs", info("(devel)"), true, "devel"},
		{"empty main version", info("", "vcs.modified", "true"), true, "devel+dirty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fromBuildInfo(tc.info, tc.ok); got != tc.want {
				t.Errorf("fromBuildInfo = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestStringPrefersStamp: a stamped Version is the answer, whatever the build info.
func TestStringPrefersStamp(t *testing.T) {
	old := Version
	t.Cleanup(func() { Version = old })
	Version = "v9.8.7"
	if got := String(); got != "v9.8.7" {
		t.Errorf("String() = %q with Version stamped v9.8.7", got)
	}
	Version = ""
	if got := String(); got == "" || got == "v9.8.7" {
		t.Errorf("String() = %q unstamped", got)
	}
}
