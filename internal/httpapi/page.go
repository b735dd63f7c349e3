package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/hosting"
)

// The paginated lists (the ledger, the operations) read their page and build their
// links and meta here, one way for all (docs/api.md, Wire format).

// pageFromQuery is the list page the request asks for (1 when it names none): a
// whole number of at least 1, given once; anything else is recorded on v under page.
func pageFromQuery(r *http.Request, v *hosting.Validation) int {
	raw, ok := queryValue(r, "page", v)
	if !ok {
		return 1
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		v.Add("page", "validation.page")
		return 1
	}
	return n
}

// pageOf builds the links and meta of page (from 1) holding n of total items. The
// links keep the list's filters (query, without page); they are absolute, on the
// public URL when one is set (Config.PublicURL), else on the request's own host.
func (s *Server) pageOf(r *http.Request, query url.Values, page, perPage, n, total int) (api.PageLinks, api.PageMeta) {
	path := s.absolute(r)
	last := max(1, (total+perPage-1)/perPage)
	q := url.Values{}
	for k, v := range query {
		if k != "page" {
			q[k] = v
		}
	}
	at := func(p int) string {
		q.Set("page", strconv.Itoa(p))
		return path + "?" + q.Encode()
	}
	links := api.PageLinks{First: at(1), Last: at(last)}
	if page > 1 {
		prev := at(min(page-1, last))
		links.Prev = &prev
	}
	if page < last {
		next := at(page + 1)
		links.Next = &next
	}
	meta := api.PageMeta{CurrentPage: page, LastPage: last, Path: path, PerPage: perPage, Total: total}
	if n > 0 {
		from, to := (page-1)*perPage+1, (page-1)*perPage+n
		meta.From, meta.To = &from, &to
	}
	return links, meta
}

// absolute is the absolute URL of the request's path: on the public URL when one is
// set, else on the scheme of the connection and the request's Host.
func (s *Server) absolute(r *http.Request) string {
	if s.publicURL != nil {
		return strings.TrimSuffix(s.publicURL.String(), "/") + r.URL.EscapedPath()
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.EscapedPath()
}
