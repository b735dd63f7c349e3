package client

import (
	"context"
	"net/http"

	"github.com/berthhq/berth/api"
)

// Licenses are software licenses sold with servers, billed by the calendar month
// (docs/api.md, Licenses). Reading them needs read; adding and removing a server's
// the scope licenses (ErrMissingScope otherwise), as does LicenseIDs in an order.

// License kinds of api.License's Per and api.ServerLicense's Status.
const (
	LicensePerServer = "server"
	LicensePerVCPU   = "vcpu"

	LicensePending   = "pending"
	LicenseActive    = "active"
	LicenseFailed    = "failed"
	LicenseCancelled = "cancelled"
)

// ListLicenses returns the license products sold, by id; InStock is false for one
// whose key pool is empty.
func (c *Client) ListLicenses(ctx context.Context) ([]api.License, error) {
	return list[api.License](c, ctx, "/licenses", nil)
}

// ListServerLicenses returns a server's licenses: those it holds (Key set for one
// from a key pool) and those removed whose paid month has not ended (cancelled).
// ErrNotFound.
func (c *Client) ListServerLicenses(ctx context.Context, server string) ([]api.ServerLicense, error) {
	return list[api.ServerLicense](c, ctx, serverPath(server, "/licenses"), nil)
}

// AddServerLicense has a server hold a license product from now; its month in
// course is charged at once. ErrNotFound, ErrServerSuspended, ErrValidation
// (unknown, held already, out of stock: under "license_id"), ErrInsufficientCredit.
func (c *Client) AddServerLicense(ctx context.Context, server string, licenseID int64) (*api.ServerLicense, error) {
	return one[api.ServerLicense](c, ctx, http.MethodPost, serverPath(server, "/licenses"), nil,
		api.ServerLicenseCreate{LicenseID: &licenseID})
}

// RemoveServerLicense cancels a server's license (id: the server's license's, not
// the product's); nothing is refunded. ErrNotFound, ErrServerSuspended,
// ErrValidation (the server's image requires it).
func (c *Client) RemoveServerLicense(ctx context.Context, server string, id int64) error {
	return c.do(ctx, http.MethodDelete, serverPath(server, idPath("/licenses", id)), nil, nil, nil)
}
