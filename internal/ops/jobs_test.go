package ops_test

import (
	"encoding/json"
	"testing"

	"github.com/riverqueue/river"

	"github.com/berthhq/berth/internal/ops"
)

// TestJobKinds: the jobs' kinds and payloads are what a queue holds; a queue written by
// an earlier berthd must run on a later one, so they never change (docs/states.md).
func TestJobKinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args    river.JobArgs
		kind    string
		payload string
	}{
		{ops.OperationArgs{OperationID: 7}, "berth.operation", `{"operation_id":7}`},
		{ops.SnapshotDeleteArgs{SnapshotID: 3}, "berth.snapshot_delete", `{"snapshot_id":3}`},
		{ops.VolumeDeleteArgs{VolumeID: 4}, "berth.volume_delete", `{"volume_id":4}`},
		{ops.MeterArgs{}, "berth.meter", `{}`},
		{ops.HousekeepingArgs{}, "berth.housekeeping", `{}`},
		{ops.DNSPublishArgs{Zone: "example.com"}, "berth.dns_publish", `{"zone":"example.com"}`},
		{ops.DNSPublishArgs{Zone: "srv.example.net", Names: []string{"web1"}}, "berth.dns_publish", `{"zone":"srv.example.net","names":["web1"]}`},
	} {
		b, err := json.Marshal(tc.args)
		if err != nil || tc.args.Kind() != tc.kind || string(b) != tc.payload {
			t.Errorf("%T: kind %q, payload %s (%v); want %q, %s", tc.args, tc.args.Kind(), b, err, tc.kind, tc.payload)
		}
	}
}
