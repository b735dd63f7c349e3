package compute

import "io/fs"

// The dialects of the databases a driver's tables live in: the names of its
// migrations' directories (Storage.Migrations) and of Env.Dialect.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// Storage is what a driver keeps in Berth's database beside the store's tables:
// tables of its own, created and changed by migrations on a line of their own, apart
// from the store's and from every other driver's (docs/drivers.md). The store runs
// the line after its own at every migration, and a store copy writes the driver's
// tables after its own.
type Storage struct {
	// Line names the driver's migration line (the driver's name). The store records
	// each line's version apart from the others'.
	Line string
	// Migrations holds the line's goose migrations, one directory a dialect:
	// sqlite/ and postgres/ (DialectSQLite, DialectPostgres).
	Migrations fs.FS
	// Tables are the driver's tables in the order a copy writes them: a row's
	// foreign keys point at the store's tables or at tables earlier in the list.
	Tables []string
}
