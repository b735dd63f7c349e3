package httpapi_test

import (
	"os"
	"testing"

	"github.com/berthhq/berth/internal/testwatch"
)

// TestMain names, at the end of the output, the tests that outlive -timeout
// (internal/testwatch): a CI log keeps only its tail.
func TestMain(m *testing.M) {
	testwatch.Start()
	os.Exit(m.Run())
}
