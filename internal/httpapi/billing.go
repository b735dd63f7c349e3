package httpapi

import (
	"net/http"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/internal/billing"
	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/ops"
)

func (s *Server) getBilling(r *request) (int, any, error) {
	b, err := s.svc.Accounts.Billing(r.ctx, r.p)
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
	var v hosting.Validation
	page := pageFromQuery(r.Request, &v)
	if err := v.Err(); err != nil {
		return 0, nil, err
	}
	list, total, err := s.svc.Accounts.Transactions(r.ctx, r.p, page)
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
	out.Links, out.Meta = s.pageOf(r.Request, nil, page, ops.TransactionsPageSize, len(list), total)
	return http.StatusOK, out, nil
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
