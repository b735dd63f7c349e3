package simdriver_test

import (
	"testing"

	"github.com/berthhq/berth/internal/compute/computetest"
	"github.com/berthhq/berth/internal/compute/simdriver"
)

func TestStorage(t *testing.T) {
	t.Parallel()
	computetest.ExerciseStorage(t, simdriver.Storage())
}
