package api_test

import (
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

// TestSandboxSeedLimitsMatchRules: the limits the document gives a sandbox reset's
// credit and a seeded server's display name accept and refuse what Berth's rules do.
func TestSandboxSeedLimitsMatchRules(t *testing.T) {
	t.Parallel()
	doc := loadDoc(t)
	credit := func(s string) bool { _, err := ops.ParseSandboxCredit("credit", s); return err == nil }
	compare(t, doc, "SandboxReset.credit", credit, []string{
		"", "0", "00", "1", "100", "100.", ".5", "99.5", "99.50", "12.5000", "12.50000", "-1", "+1", " 1", "1 ", "1e3",
		"1,5", "١", strings.Repeat("9", 14), strings.Repeat("9", 15), strings.Repeat("9", 14) + ".9999", "0.0001",
	})
	label := func(s string) bool {
		var v hosting.Validation
		hosting.CheckLabel(&v, "f", s)
		return v.Empty()
	}
	compare(t, doc, "SandboxSeedServer.display_name", label, []string{
		"", " ", "a", " a ", "web-1", strings.Repeat("x", 64), strings.Repeat("x", 65), strings.Repeat("日", 64),
		strings.Repeat("日", 65), "a\tb", "\x7f", "é\u0085",
	})
}
