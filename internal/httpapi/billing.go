package httpapi

import (
	"net/http"
	"strconv"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

func (s *Server) getBilling(r *request) (int, any, error) {
	b, err := s.svc.Billing(r.ctx, r.p)
	if err != nil {
		return 0, nil, err
	}
	out := api.Billing{Credit: b.Credit.String(), Currency: b.Currency, HourlyBurn: b.HourlyBurn.String(),
		MonthlyBurn: b.MonthlyBurn.String(), DaysLeft: b.DaysLeft, MonthToDate: b.MonthToDate.String()}
	if b.Budget != nil {
		v := b.Budget.String()
		out.Budget = &v
	}
	return http.StatusOK, one(out), nil
}

func (s *Server) listTransactions(r *request) (int, any, error) {
	page := 1
	var v hosting.Validation
	if raw, ok := queryValue(r.Request, "page", &v); ok {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			v.Add("page", "validation.page")
		}
		page = n
	}
	if err := v.Err(); err != nil {
		return 0, nil, err
	}
	list, total, err := s.svc.Transactions(r.ctx, r.p, page)
	if err != nil {
		return 0, nil, err
	}
	lang := r.p.Account.Language
	out := api.Page[api.Transaction]{Data: make([]api.Transaction, len(list))}
	for i, t := range list {
		out.Data[i] = api.Transaction{ID: t.ID, Type: string(t.Type), Amount: t.Amount.String(), BalanceAfter: t.BalanceAfter.String(),
			Description: s.describeTransaction(lang, t), PeriodStart: t.PeriodStart, CreatedAt: t.CreatedAt}
		if t.ResourceID != nil {
			out.Data[i].Resource = &api.ResourceRef{Type: t.ResourceType, ID: *t.ResourceID, Name: t.ResourceName}
		}
	}
	out.Links, out.Meta = pageOf(r.Request, page, ops.TransactionsPageSize, len(list), total)
	return http.StatusOK, out, nil
}

// pageOf builds the links and meta of page (from 1) holding n of total items.
func pageOf(r *http.Request, page, perPage, n, total int) (api.PageLinks, api.PageMeta) {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	path := scheme + "://" + r.Host + r.URL.Path
	last := max(1, (total+perPage-1)/perPage)
	at := func(p int) string { return path + "?page=" + strconv.Itoa(p) }
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

// describeTransaction is an entry's description in lang: the operator's words for
// a top-up or adjustment, else what Berth charged or refunded and why.
func (s *Server) describeTransaction(lang string, t hosting.Transaction) string {
	text, m := billing.Describe(t)
	if text != "" {
		return text
	}
	return s.i18n.T(lang, m.ID, m.Args)
}
