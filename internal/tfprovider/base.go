package tfprovider

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/i18n"
)

// base is what every resource and data source has: its type name and, once the
// provider is configured, the SDK client and the account's language.
type base struct {
	name string // berth_<name>
	c    *client.Client
	lang string
}

// configuredData is what the provider's Configure gives its resources and data
// sources.
type configuredData struct {
	c    *client.Client
	lang string // of the account: the provider's own messages are in it too
}

// messages are Berth's message catalogs (internal/i18n).
var messages = sync.OnceValue(i18n.MustLoad)

// message is a message of the catalogs in lang.
func message(lang, id string, args map[string]any) string { return messages().T(lang, id, args) }

// Metadata names the resource or data source berth_<name>.
func (b *base) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + b.name
}

// Configure takes the provider's client (nil before the provider is configured, as
// during validation).
func (b *base) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	b.configure(req.ProviderData, &resp.Diagnostics)
}

// dataBase is base for a data source (the framework's request types differ).
type dataBase struct{ base }

// Metadata names the data source berth_<name>.
func (b *dataBase) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + b.name
}

// Configure takes the provider's client.
func (b *dataBase) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	b.configure(req.ProviderData, &resp.Diagnostics)
}

func (b *base) configure(data any, diags *diag.Diagnostics) {
	if data == nil {
		return
	}
	d, ok := data.(*configuredData)
	if !ok {
		diags.AddError("Internal error in the berth provider", fmt.Sprintf("provider data of type %T", data))
		return
	}
	b.c, b.lang = d.c, d.lang
}

// apiMessage is the message of an API error (in the account's language), or the
// error itself when it is not one.
func apiMessage(err error) string {
	var e *client.Error
	if errors.As(err, &e) && e.Message != "" {
		return e.Message
	}
	return err.Error()
}

// fields maps the request fields of the API that a resource's attributes stand for to
// those attributes (e.g. plan_id to plan).
type fields map[string]string

// addError adds err as diagnostics, headed what ("Cannot create the server"): a 422 as
// one error per rejected field, on the attribute that field stands for (fm, else the
// attribute of the field's own name when the resource has one, else the resource as a
// whole), with the API's message in the account's language; anything else as one
// error.
func addError(diags *diag.Diagnostics, what string, err error, fm fields, has func(string) bool) {
	var e *client.Error
	if !errors.As(err, &e) || !errors.Is(e, client.ErrValidation) || len(e.Fields) == 0 {
		diags.AddError(what, describeError(err))
		return
	}
	for _, f := range e.FieldNames() {
		attr, ok := fm[f]
		if !ok && has(f) {
			attr, ok = f, true
		}
		msg := strings.Join(e.Fields[f], "\n")
		if !ok {
			diags.AddError(what, f+": "+msg)
			continue
		}
		diags.AddAttributeError(path.Root(attr), what, msg)
	}
}

// describeError says what an error is: the API's message with its status and code,
// an operation's failure, or the error as it is.
func describeError(err error) string {
	var e *client.Error
	if errors.As(err, &e) {
		s := fmt.Sprintf("%s (HTTP %d %s", e.Message, e.StatusCode, e.Code)
		if e.RequestID != "" {
			s += ", request " + e.RequestID
		}
		return s + ")"
	}
	return err.Error()
}

// idString is an id as Terraform holds it.
func idString(id int64) types.String { return types.StringValue(strconv.FormatInt(id, 10)) }

// optionalID is an optional id: null for nil.
func optionalID(id *int64) types.String {
	if id == nil {
		return types.StringNull()
	}
	return idString(*id)
}

// parseID reads an id attribute, adding an error on at when it is not a positive
// number.
func parseID(v types.String, at path.Path, diags *diag.Diagnostics) int64 {
	n, err := strconv.ParseInt(v.ValueString(), 10, 64)
	if err != nil || n <= 0 {
		diags.AddAttributeError(at, "Not an id", fmt.Sprintf("%q is not a Berth id (a positive number).", v.ValueString()))
		return 0
	}
	return n
}

// asID reads s as an id, when it is one.
func asID(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}

// isNotFound reports whether err is a 404.
func isNotFound(err error) bool { return errors.Is(err, client.ErrNotFound) }

// spelled is the state's spelling of something named by id and name: cur when it
// names it (by its name or its id: the configuration's choice), else its name.
func spelled(cur types.String, id int64, name string) types.String {
	if !cur.IsNull() && !cur.IsUnknown() && (cur.ValueString() == name || cur.ValueString() == strconv.FormatInt(id, 10)) {
		return cur
	}
	if name == "" {
		return idString(id)
	}
	return types.StringValue(name)
}

// within is ctx bounded by a timeout of a resource's timeouts block (get, e.g.
// m.Timeouts.Create), def where the block does not set it; a timeout that does not
// parse is an error in diags (and def is used).
func within(ctx context.Context, get func(context.Context, time.Duration) (time.Duration, diag.Diagnostics),
	def time.Duration, diags *diag.Diagnostics) (context.Context, context.CancelFunc) {
	d, ds := get(ctx, def)
	diags.Append(ds...)
	return context.WithTimeout(ctx, d)
}
