package webui_test

import (
	"os"
	"testing"

	"github.com/berthhq/berth/internal/testwatch"
)

// TestMain names, at the end of the output, the tests that outlive -timeout
// (internal/testwatch): a CI log keeps only its tail. Passwords are hashed at
// bcrypt's lowest cost here as in every test binary that imports internal/testenv.
func TestMain(m *testing.M) {
	testwatch.Start()
	os.Exit(m.Run())
}
