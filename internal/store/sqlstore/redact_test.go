package sqlstore_test

import (
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/store/sqlstore"
)

// TestRedact: a database URL in a log line, an error or a help text never carries its
// password, in any form berthd may be given one (docs/SECURITY.md), and keeps the
// rest for the operator to recognise.
func TestRedact(t *testing.T) {
	const pw = "S3cretPassw0rd"
	for _, c := range []struct{ in, want string }{
		{"postgres://berth:" + pw + "@db.internal:5432/berth?sslmode=verify-full",
			"postgres://berth:xxxxx@db.internal:5432/berth?sslmode=verify-full"},
		{"postgresql://berth:" + pw + "@h1,h2/berth", "postgresql://berth:xxxxx@h1,h2/berth"},
		{"postgres://berth@db/berth?password=" + pw + "&sslmode=disable", "postgres://berth@db/berth?password=xxxxx&sslmode=disable"},
		{"postgres://berth@db/berth?sslpassword=" + pw, "postgres://berth@db/berth?sslpassword=xxxxx"},
		{"postgres://berth@db/berth", "postgres://berth@db/berth"},
		{"postgres://db/berth?sslmode=disable", "postgres://db/berth?sslmode=disable"},
		// PostgreSQL's keyword form, and what is no scheme://... URL.
		{"host=db port=5432 user=berth password=" + pw + " dbname=berth", "host=db port=5432 user=berth password=xxxxx dbname=berth"},
		{"host=db password = '" + pw + " with spaces' dbname=berth", "host=db password = xxxxx dbname=berth"},
		{"password=" + pw, "password=xxxxx"},
		{"host=db PASSWORD=" + pw, "host=db PASSWORD=xxxxx"},
		{"host=db sslpassword=" + pw, "host=db sslpassword=xxxxx"},
		{"berth:" + pw + "@db/berth", "xxxxx@db/berth"},
		{"postgres:berth:" + pw + "@db/berth", "xxxxx@db/berth"},
		{"localhost/berth", "localhost/berth"},
		{"postgres://berth:" + pw + "%zz@db/berth", "(a database URL that does not parse)"},
	} {
		got := sqlstore.Redact(c.in)
		if got != c.want || strings.Contains(got, pw) {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
