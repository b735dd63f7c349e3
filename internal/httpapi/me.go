package httpapi

import "github.com/berthhq/berth/api"

// patchMe answers PATCH /me: it sets the account's language (en, de, fr; else 422 on
// language), which every message of the API and the console reads from the next
// request on. It only changes how messages read, so any token may (scope read). A
// field left out keeps its value.
func (s *Server) patchMe(r *request) (int, any, error) {
	var b api.MeUpdate
	if err := decode(r.Request, &b); err != nil {
		return 0, nil, err
	}
	if b.Language != nil {
		a, err := s.svc.Accounts.SetLanguage(r.ctx, r.p, *b.Language)
		if err != nil {
			return 0, nil, err
		}
		r.p.Account = a
	}
	return s.me(r)
}
