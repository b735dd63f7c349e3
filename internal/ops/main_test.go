package ops_test

import (
	"os"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testwatch"
)

// TestMain hashes passwords at bcrypt's lowest cost: the tests sign in often, and
// under the race detector one hash at the default cost takes seconds.
func TestMain(m *testing.M) {
	ops.PasswordCost = bcrypt.MinCost
	testwatch.Start()
	os.Exit(m.Run())
}
