package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// everyLicenseEndpoint: each license method against a real Berth on srv, with the
// errors a client handles apart.
func everyLicenseEndpoint(t *testing.T, ctx context.Context, c *client.Client, srv *api.Server) {
	t.Helper()
	var plesk *api.License
	for _, l := range must[[]api.License](t)(c.ListLicenses(ctx)) {
		if l.Name == "plesk-web-admin" {
			plesk = &l
		}
	}
	if plesk == nil || plesk.Per != client.LicensePerServer || !plesk.InStock {
		t.Fatalf("ListLicenses: no plesk in stock: %+v", plesk)
	}
	held := must[*api.ServerLicense](t)(c.AddServerLicense(ctx, srv.Name, plesk.ID))
	if held.Status != client.LicenseActive || held.LicenseID != plesk.ID || held.Key != nil {
		t.Errorf("AddServerLicense: %+v", held)
	}
	if _, err := c.AddServerLicense(ctx, srv.Name, plesk.ID); !errors.Is(err, client.ErrValidation) {
		t.Errorf("AddServerLicense twice: %v, want ErrValidation", err)
	}
	if err := c.RemoveServerLicense(ctx, srv.Name, held.ID); err != nil {
		t.Errorf("RemoveServerLicense: %v", err)
	}
	ls := must[[]api.ServerLicense](t)(c.ListServerLicenses(ctx, srv.Name))
	if len(ls) != 1 || ls[0].ID != held.ID || ls[0].Status != client.LicenseCancelled {
		t.Errorf("ListServerLicenses after the removal: %+v", ls)
	}
	if err := c.RemoveServerLicense(ctx, srv.Name, held.ID); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("RemoveServerLicense twice: %v, want ErrNotFound", err)
	}
}
