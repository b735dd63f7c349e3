package victoria_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/berthhq/berth/internal/metrics"
	"github.com/berthhq/berth/internal/metrics/victoria"
)

// TestWriteRequest decodes the remote write body field by field (what prompb would
// read): five series a sample, labels sorted by name, the value a double and the
// timestamp in Unix ms; CPU to 0.01 and clamped as the SQL store keeps it.
func TestWriteRequest(t *testing.T) {
	at := time.Unix(1_790_000_000, 0)
	body := victoria.WriteRequest([]metrics.Sample{
		{ServerID: 12, AccountID: 3, At: at, CPU: 12.345, NetIn: 1, NetOut: 2, DiskRead: 3, DiskWrite: 1 << 40},
		{ServerID: 13, AccountID: 4, At: at.Add(time.Minute), CPU: 150},
	})
	var got []string
	for len(body) > 0 {
		ts := field(t, &body, 1, protowire.BytesType)
		var labels []string
		var sample string
		for len(ts) > 0 {
			num, typ, n := protowire.ConsumeTag(ts)
			if n < 0 {
				t.Fatal("bad tag")
			}
			switch num {
			case 1:
				l := field(t, &ts, 1, typ)
				name := string(field(t, &l, 1, protowire.BytesType))
				value := string(field(t, &l, 2, protowire.BytesType))
				labels = append(labels, name+"="+value)
			case 2:
				s := field(t, &ts, 2, typ)
				v := field(t, &s, 1, protowire.Fixed64Type)
				ms := field(t, &s, 2, protowire.VarintType)
				bits, _ := protowire.ConsumeFixed64(v)
				msv, _ := protowire.ConsumeVarint(ms)
				sample = fmt.Sprintf("%v@%d", math.Float64frombits(bits), msv)
			default:
				t.Fatalf("field %d in a TimeSeries", num)
			}
		}
		got = append(got, strings.Join(labels, ",")+" "+sample)
	}
	want := []string{
		"__name__=berth_server_cpu_percent,account=3,server=12 12.35@1790000000000",
		"__name__=berth_server_network_receive_bytes_per_second,account=3,server=12 1@1790000000000",
		"__name__=berth_server_network_transmit_bytes_per_second,account=3,server=12 2@1790000000000",
		"__name__=berth_server_disk_read_bytes_per_second,account=3,server=12 3@1790000000000",
		"__name__=berth_server_disk_write_bytes_per_second,account=3,server=12 1.099511627776e+12@1790000000000",
		"__name__=berth_server_cpu_percent,account=4,server=13 100@1790000060000",
		"__name__=berth_server_network_receive_bytes_per_second,account=4,server=13 0@1790000060000",
		"__name__=berth_server_network_transmit_bytes_per_second,account=4,server=13 0@1790000060000",
		"__name__=berth_server_disk_read_bytes_per_second,account=4,server=13 0@1790000060000",
		"__name__=berth_server_disk_write_bytes_per_second,account=4,server=13 0@1790000060000",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("WriteRequest decodes to\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// field consumes field num of type typ from *b and returns its payload (the bytes of
// a length-delimited field, the raw encoding of the others).
func field(t *testing.T, b *[]byte, num protowire.Number, typ protowire.Type) []byte {
	t.Helper()
	n, ty, l := protowire.ConsumeTag(*b)
	if l < 0 || n != num || ty != typ {
		t.Fatalf("want field %d of type %d, have %d of %d", num, typ, n, ty)
	}
	*b = (*b)[l:]
	if typ == protowire.BytesType {
		v, m := protowire.ConsumeBytes(*b)
		if m < 0 {
			t.Fatal("bad bytes")
		}
		*b = (*b)[m:]
		return v
	}
	m := protowire.ConsumeFieldValue(num, typ, *b)
	if m < 0 {
		t.Fatal("bad value")
	}
	v := (*b)[:m]
	*b = (*b)[m:]
	return v
}

// TestNew: the metrics URL is an http(s) base of a VictoriaMetrics.
func TestNew(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://127.0.0.1:8428", true},
		{"https://vm.example.com/", true},
		{"http://proxy.example.com/victoria", true},
		{"", false},
		{"127.0.0.1:8428", false},
		{"ftp://127.0.0.1:8428", false},
		{"http://", false},
		{"http://127.0.0.1:8428/?x=1", false},
		{"http://127.0.0.1:8428/#a", false},
		{"http://[::1", false},
	} {
		if _, err := victoria.New(tc.url); (err == nil) != tc.ok {
			t.Errorf("New(%q) = %v; want ok %v", tc.url, err, tc.ok)
		}
	}
}
