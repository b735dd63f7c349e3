package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
)

// TestDecodeStrict: bodies decode only as the JSON objects the schema describes.
func TestDecodeStrict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body  string
		field string // "" means accepted
	}{
		{"", ""},
		{" \t\r\n", ""},
		{"\n{\"name\":\"p\"}\r\n", ""},
		{"\v", "body"},
		{"\f{}", "body"},
		{"\u00a0{\"name\":\"p\"}", "body"},
		{"{\"name\":\"p\"}\u0085", "body"},
	} {
		var dst api.ProjectWrite
		err := decode(httptest.NewRequest("POST", "/", strings.NewReader(tc.body)), &dst)
		e, _ := err.(*hosting.Error)
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%q: %v, want accepted", tc.body, err)
		case tc.field != "" && (e == nil || len(e.Fields[tc.field]) == 0):
			t.Errorf("%q: %v, want an error on %s", tc.body, err, tc.field)
		}
	}
}
