package ops

import (
	"context"
	"math"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// OperationsPageSize is how many operations a page of GET /v1/operations holds: the
// transactions' page size, so that both paginated lists read alike.
const OperationsPageSize = TransactionsPageSize

// Operations returns page (from 1) of the principal's operations, of its servers and
// volumes, live and deleted alike, newest first, and how many match f in all. A
// server or volume of another account matches nothing.
func (s *Service) Operations(ctx context.Context, p hosting.Principal, f store.OperationFilter, page int) ([]hosting.Operation, int, error) {
	list, total, err := s.store.Operations(ctx, p.Account.ID, f, OperationsPageSize, pageOffset(page, OperationsPageSize))
	return list, total, internal("operations", err)
}

// pageOffset is where page (from 1) of size items starts. A page so far on that its
// offset does not fit an int is past any list; (page-1)*size would wrap negative, and
// a negative OFFSET reads from the start.
func pageOffset(page, size int) int {
	if page-1 > math.MaxInt/size {
		return math.MaxInt
	}
	return (page - 1) * size
}
