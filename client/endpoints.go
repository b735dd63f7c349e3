package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/berthhq/berth/api"
)

// One method per operation of api/openapi.yaml, named after its operationId (a test
// holds the two together). Every method can fail with an *Error: 401
// (ErrUnauthenticated), 403 (ErrAccountBlocked; ErrMissingScope where a scope other
// than read is needed), 429 (ErrRateLimited) and 503 (ErrUnavailable) once the retry
// policy gives up, and 500 (ErrInternal); the doc comments name the others.
//
// A server is named by its numeric id ("42", see ID) or by its name
// ("server-a1b2c3"); every other resource by its numeric id.

// Power actions for PowerServer.
const (
	PowerOn       = "on"       // stopped → starting → running
	PowerShutdown = "shutdown" // graceful (ACPI): running → stopping → stopped
	PowerOff      = "off"      // forced: running → stopping → stopped
	PowerReboot   = "reboot"   // graceful: running → stopping → starting → running
	PowerReset    = "reset"    // hard: running → starting → running
)

// Ranges for GetServerMetrics.
const (
	Range1h  = "1h"
	Range6h  = "6h"
	Range24h = "24h"
	Range7d  = "7d"
)

// ID names a server by its numeric id, for the methods that take a server.
func ID(id int64) string { return strconv.FormatInt(id, 10) }

func serverPath(server string, rest string) string {
	return "/servers/" + url.PathEscape(server) + rest
}

func idPath(prefix string, id int64) string { return prefix + "/" + strconv.FormatInt(id, 10) }

func one[T any](c *Client, ctx context.Context, method, path string, query url.Values, in any) (*T, error) {
	var out api.One[T]
	if err := c.do(ctx, method, path, query, in, &out); err != nil {
		return nil, err
	}
	return &out.Data, nil
}

func list[T any](c *Client, ctx context.Context, path string, query url.Values) ([]T, error) {
	var out api.List[T]
	if err := c.do(ctx, http.MethodGet, path, query, nil, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

func page[T any](c *Client, ctx context.Context, path string, query url.Values) (*api.Page[T], error) {
	var out api.Page[T]
	if err := c.do(ctx, http.MethodGet, path, query, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetOpenAPI returns the API's OpenAPI document as JSON (no token needed).
func (c *Client) GetOpenAPI(ctx context.Context) (json.RawMessage, error) {
	var doc json.RawMessage
	if err := c.do(ctx, http.MethodGet, "/openapi.json", nil, nil, &doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// GetMe returns the account and the calling token (also for a blocked account).
func (c *Client) GetMe(ctx context.Context) (*api.Me, error) {
	return one[api.Me](c, ctx, http.MethodGet, "/me", nil, nil)
}

// UpdateMe sets the account's language. ErrValidation: not en, de or fr.
func (c *Client) UpdateMe(ctx context.Context, req api.MeUpdate) (*api.Me, error) {
	return one[api.Me](c, ctx, http.MethodPatch, "/me", nil, req)
}

// GetBilling returns the credit, burn rates, days left and month-to-date spend.
func (c *Client) GetBilling(ctx context.Context) (*api.Billing, error) {
	return one[api.Billing](c, ctx, http.MethodGet, "/billing", nil, nil)
}

// ListTransactions returns one page of the ledger, newest first, 50 a page; page 0
// is the first. AllTransactions walks every page.
func (c *Client) ListTransactions(ctx context.Context, pageNo int) (*api.Page[api.Transaction], error) {
	return page[api.Transaction](c, ctx, "/billing/transactions", pageQuery(nil, pageNo))
}

// ListLocations returns every orderable location with its plans and images.
func (c *Client) ListLocations(ctx context.Context) ([]api.Location, error) {
	return list[api.Location](c, ctx, "/locations", nil)
}

// ListApps returns the one-click applications.
func (c *Client) ListApps(ctx context.Context) ([]api.App, error) {
	return list[api.App](c, ctx, "/apps", nil)
}

// ServerListOptions filter ListServers; zero values filter nothing.
type ServerListOptions struct {
	ProjectID int64
	Status    string
}

// ListServers returns the account's servers in creation order. ErrValidation: a bad
// status.
func (c *Client) ListServers(ctx context.Context, opts ServerListOptions) ([]api.Server, error) {
	q := url.Values{}
	if opts.ProjectID != 0 {
		q.Set("project_id", strconv.FormatInt(opts.ProjectID, 10))
	}
	if opts.Status != "" {
		q.Set("status", opts.Status)
	}
	return list[api.Server](c, ctx, "/servers", q)
}

// CreateServer orders a server: it answers at once with status "provisioning" and the
// provisioning operation in Operation (wait with WaitOperation or WaitServer).
// ErrValidation (Fields names each failed check), ErrInsufficientCredit, ErrMissingScope
// (servers). Retries are safe: one call makes at most one server.
func (c *Client) CreateServer(ctx context.Context, req api.ServerCreate) (*api.Server, error) {
	return one[api.Server](c, ctx, http.MethodPost, "/servers", nil, req)
}

// GetServer returns a server. ErrNotFound.
func (c *Client) GetServer(ctx context.Context, server string) (*api.Server, error) {
	return one[api.Server](c, ctx, http.MethodGet, serverPath(server, ""), nil, nil)
}

// UpdateServer changes display_name and/or project_id (api.Null unassigns); allowed
// while an operation runs. ErrNotFound, ErrValidation, ErrServerSuspended.
func (c *Client) UpdateServer(ctx context.Context, server string, req api.ServerUpdate) (*api.Server, error) {
	return one[api.Server](c, ctx, http.MethodPatch, serverPath(server, ""), nil, req)
}

// DeleteServer deletes a server and its snapshots. ErrNotFound, ErrBusy,
// ErrServerSuspended. A DELETE whose answer was lost is not retried: its second try
// could only say 404.
func (c *Client) DeleteServer(ctx context.Context, server string) error {
	return c.do(ctx, http.MethodDelete, serverPath(server, ""), nil, nil, nil)
}

// PowerServer runs a power action (PowerOn, PowerShutdown, ...) and returns the
// server in its transient status. ErrNotFound, ErrBusy, ErrServerSuspended,
// ErrValidation (an action that does not fit the status, under "action").
func (c *Client) PowerServer(ctx context.Context, server, action string) (*api.Server, error) {
	return one[api.Server](c, ctx, http.MethodPost, serverPath(server, "/power"), nil, api.PowerRequest{Action: &action})
}

// ReinstallServer rebuilds a server from an image, wiping its disk. ErrNotFound,
// ErrBusy, ErrServerSuspended, ErrValidation.
func (c *Client) ReinstallServer(ctx context.Context, server string, imageID int64) (*api.Server, error) {
	return one[api.Server](c, ctx, http.MethodPost, serverPath(server, "/reinstall"), nil, api.ReinstallRequest{ImageID: &imageID})
}

// ListRescaleOptions returns the plans a server can move to. ErrNotFound.
func (c *Client) ListRescaleOptions(ctx context.Context, server string) ([]api.RescaleOption, error) {
	return list[api.RescaleOption](c, ctx, serverPath(server, "/rescale-options"), nil)
}

// GetServerMetrics returns a server's load over rng (Range1h, ...; "" is 1h).
// ErrNotFound, ErrValidation (a bad range).
func (c *Client) GetServerMetrics(ctx context.Context, server, rng string) (*api.Metrics, error) {
	var q url.Values
	if rng != "" {
		q = url.Values{"range": {rng}}
	}
	return one[api.Metrics](c, ctx, http.MethodGet, serverPath(server, "/metrics"), q, nil)
}

// RescaleServer moves a stopped server to another plan. ErrNotFound, ErrBusy,
// ErrServerSuspended, ErrValidation (not stopped: "server"; plan: "plan_id").
func (c *Client) RescaleServer(ctx context.Context, server string, req api.RescaleRequest) (*api.Server, error) {
	return one[api.Server](c, ctx, http.MethodPost, serverPath(server, "/rescale"), nil, req)
}

// OperationListOptions filter and page the operation lists; zero values filter
// nothing and ask for the first page.
type OperationListOptions struct {
	// ServerID keeps one server's operations (ListOperations only; a deleted
	// server's too).
	ServerID int64
	// VolumeID keeps one volume's operations (ListOperations only; a deleted
	// volume's too).
	VolumeID int64
	// Status is running, success or error.
	Status string
	// Page is the page, from 1.
	Page int
}

func (o OperationListOptions) query() url.Values {
	q := url.Values{}
	if o.ServerID != 0 {
		q.Set("server_id", strconv.FormatInt(o.ServerID, 10))
	}
	if o.VolumeID != 0 {
		q.Set("volume_id", strconv.FormatInt(o.VolumeID, 10))
	}
	if o.Status != "" {
		q.Set("status", o.Status)
	}
	return pageQuery(q, o.Page)
}

func pageQuery(q url.Values, pageNo int) url.Values {
	if pageNo > 1 {
		if q == nil {
			q = url.Values{}
		}
		q.Set("page", strconv.Itoa(pageNo))
	}
	return q
}

// ListServerOperations returns one page of a server's operations, newest first.
// ErrNotFound, ErrValidation. opts.ServerID must be zero: the server is the argument;
// so must opts.VolumeID (ListOperations takes it).
func (c *Client) ListServerOperations(ctx context.Context, server string, opts OperationListOptions) (*api.Page[api.Operation], error) {
	if opts.ServerID != 0 {
		return nil, errors.New("berth: ListServerOperations: the server is its argument, not opts.ServerID")
	}
	if opts.VolumeID != 0 {
		return nil, errors.New("berth: ListServerOperations: a server's operations take no opts.VolumeID (ListOperations does)")
	}
	return page[api.Operation](c, ctx, serverPath(server, "/operations"), opts.query())
}

// ListSnapshots returns a server's snapshots, newest first. ErrNotFound.
func (c *Client) ListSnapshots(ctx context.Context, server string) ([]api.Snapshot, error) {
	return list[api.Snapshot](c, ctx, serverPath(server, "/snapshots"), nil)
}

// CreateSnapshot starts a snapshot (status "creating"; the server is busy until it is
// "available"). ErrNotFound, ErrBusy, ErrServerSuspended, ErrValidation.
func (c *Client) CreateSnapshot(ctx context.Context, server string, req api.SnapshotCreate) (*api.Snapshot, error) {
	return one[api.Snapshot](c, ctx, http.MethodPost, serverPath(server, "/snapshots"), nil, req)
}

// RestoreSnapshot restores a server from one of its snapshots and returns the server
// in status "restoring". ErrNotFound, ErrBusy, ErrServerSuspended, ErrValidation.
func (c *Client) RestoreSnapshot(ctx context.Context, server string, snapshot int64) (*api.Server, error) {
	return one[api.Server](c, ctx, http.MethodPost, serverPath(server, idPath("/snapshots", snapshot)+"/restore"), nil, struct{}{})
}

// DeleteSnapshot deletes a snapshot at once (Result "deleted") or, while the server is
// busy, when its operation ends ("scheduled"). ErrNotFound, ErrServerSuspended.
func (c *Client) DeleteSnapshot(ctx context.Context, server string, snapshot int64) (*api.SnapshotDeletion, error) {
	return one[api.SnapshotDeletion](c, ctx, http.MethodDelete, serverPath(server, idPath("/snapshots", snapshot)), nil, nil)
}

// ListSSHKeys returns the account's SSH keys.
func (c *Client) ListSSHKeys(ctx context.Context) ([]api.SSHKey, error) {
	return list[api.SSHKey](c, ctx, "/ssh-keys", nil)
}

// CreateSSHKey stores a public key. ErrValidation (a key that does not parse, or one
// the account has already: "public_key"), ErrMissingScope (ssh-keys).
func (c *Client) CreateSSHKey(ctx context.Context, req api.SSHKeyCreate) (*api.SSHKey, error) {
	return one[api.SSHKey](c, ctx, http.MethodPost, "/ssh-keys", nil, req)
}

// DeleteSSHKey deletes a key; servers keep it. ErrNotFound.
func (c *Client) DeleteSSHKey(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodDelete, idPath("/ssh-keys", id), nil, nil, nil)
}

// ListProjects returns the account's projects with their server counts.
func (c *Client) ListProjects(ctx context.Context) ([]api.Project, error) {
	return list[api.Project](c, ctx, "/projects", nil)
}

// CreateProject makes a project. ErrValidation (a name taken: "name").
func (c *Client) CreateProject(ctx context.Context, req api.ProjectWrite) (*api.Project, error) {
	return one[api.Project](c, ctx, http.MethodPost, "/projects", nil, req)
}

// UpdateProject renames a project. ErrNotFound, ErrValidation.
func (c *Client) UpdateProject(ctx context.Context, id int64, req api.ProjectWrite) (*api.Project, error) {
	return one[api.Project](c, ctx, http.MethodPatch, idPath("/projects", id), nil, req)
}

// DeleteProject deletes a project; its servers keep running, unassigned. ErrNotFound.
func (c *Client) DeleteProject(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodDelete, idPath("/projects", id), nil, nil, nil)
}

// ListRecipes returns the account's first-boot scripts.
func (c *Client) ListRecipes(ctx context.Context) ([]api.Recipe, error) {
	return list[api.Recipe](c, ctx, "/recipes", nil)
}

// CreateRecipe stores a first-boot script. ErrValidation, ErrMissingScope (recipes).
func (c *Client) CreateRecipe(ctx context.Context, req api.RecipeWrite) (*api.Recipe, error) {
	return one[api.Recipe](c, ctx, http.MethodPost, "/recipes", nil, req)
}

// GetRecipe returns a recipe. ErrNotFound.
func (c *Client) GetRecipe(ctx context.Context, id int64) (*api.Recipe, error) {
	return one[api.Recipe](c, ctx, http.MethodGet, idPath("/recipes", id), nil, nil)
}

// UpdateRecipe changes a recipe's name and/or script. ErrNotFound, ErrValidation.
func (c *Client) UpdateRecipe(ctx context.Context, id int64, req api.RecipeWrite) (*api.Recipe, error) {
	return one[api.Recipe](c, ctx, http.MethodPatch, idPath("/recipes", id), nil, req)
}

// DeleteRecipe deletes a recipe. ErrNotFound.
func (c *Client) DeleteRecipe(ctx context.Context, id int64) error {
	return c.do(ctx, http.MethodDelete, idPath("/recipes", id), nil, nil, nil)
}

// ListOperations returns one page of the account's operations, of its servers and
// volumes, newest first. ErrValidation (Fields names the filter: "server_id",
// "volume_id", "status", "page").
func (c *Client) ListOperations(ctx context.Context, opts OperationListOptions) (*api.Page[api.Operation], error) {
	return page[api.Operation](c, ctx, "/operations", opts.query())
}

// GetOperation returns an operation as it stands. ErrNotFound. WaitOperation waits
// for its end.
func (c *Client) GetOperation(ctx context.Context, id int64) (*api.Operation, error) {
	return one[api.Operation](c, ctx, http.MethodGet, idPath("/operations", id), nil, nil)
}
