package sqlstore

import (
	"context"

	"github.com/berthhq/berth/internal/hosting"
)

// ---- ssh keys ----

// Lookups by id never read an id of 0 as "any": a body's {"ssh_key_ids": [0]} would
// install the account's first key. Each has its own query, the list another.

const sshKeyCols = `SELECT id, account_id, name, public_key, fingerprint, created_at FROM ssh_keys WHERE account_id = ?`

func scanSSHKey(sc func(...any) error) (hosting.SSHKey, error) {
	var k hosting.SSHKey
	var created int64
	if err := sc(&k.ID, &k.AccountID, &k.Name, &k.PublicKey, &k.Fingerprint, &created); err != nil {
		return k, err
	}
	k.CreatedAt = fromMS(created)
	return k, nil
}

func (q queries) sshKeys(ctx context.Context, query string, args ...any) ([]hosting.SSHKey, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	return orEmpty(collect(rows, err, scanSSHKey))
}

func (q queries) SSHKeys(ctx context.Context, accountID int64) ([]hosting.SSHKey, error) {
	return q.sshKeys(ctx, sshKeyCols+` ORDER BY id`, accountID)
}

func (q queries) SSHKey(ctx context.Context, accountID, id int64) (hosting.SSHKey, error) {
	ks, err := q.sshKeys(ctx, sshKeyCols+` AND id = ?`, accountID, id)
	if err != nil || len(ks) == 0 {
		return hosting.SSHKey{}, orNotFound(err)
	}
	return ks[0], nil
}

func (q queries) CreateSSHKey(ctx context.Context, k hosting.SSHKey) (int64, error) {
	return q.insert(ctx, `INSERT INTO ssh_keys (account_id, name, public_key, fingerprint, created_at) VALUES (?, ?, ?, ?, ?)`,
		k.AccountID, k.Name, k.PublicKey, k.Fingerprint, ms(k.CreatedAt))
}

func (q queries) DeleteSSHKey(ctx context.Context, accountID, id int64) error {
	return q.execOne(ctx, `DELETE FROM ssh_keys WHERE id = ? AND account_id = ?`, id, accountID)
}

// ---- projects ----

const projectCols = `SELECT p.id, p.account_id, p.name, p.created_at,
		(SELECT COUNT(*) FROM servers s WHERE s.project_id = p.id AND s.deleted_at IS NULL)
		FROM projects p WHERE p.account_id = ?`

func scanProject(sc func(...any) error) (hosting.Project, error) {
	var p hosting.Project
	var created int64
	if err := sc(&p.ID, &p.AccountID, &p.Name, &created, &p.ServerCount); err != nil {
		return p, err
	}
	p.CreatedAt = fromMS(created)
	return p, nil
}

func (q queries) projects(ctx context.Context, query string, args ...any) ([]hosting.Project, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	return orEmpty(collect(rows, err, scanProject))
}

func (q queries) Projects(ctx context.Context, accountID int64) ([]hosting.Project, error) {
	return q.projects(ctx, projectCols+` ORDER BY p.id`, accountID)
}

func (q queries) Project(ctx context.Context, accountID, id int64) (hosting.Project, error) {
	ps, err := q.projects(ctx, projectCols+` AND p.id = ?`, accountID, id)
	if err != nil || len(ps) == 0 {
		return hosting.Project{}, orNotFound(err)
	}
	return ps[0], nil
}

func (q queries) CreateProject(ctx context.Context, p hosting.Project) (int64, error) {
	return q.insert(ctx, `INSERT INTO projects (account_id, name, created_at) VALUES (?, ?, ?)`, p.AccountID, p.Name, ms(p.CreatedAt))
}

func (q queries) RenameProject(ctx context.Context, accountID, id int64, name string) error {
	return q.execOne(ctx, `UPDATE projects SET name = ? WHERE id = ? AND account_id = ?`, name, id, accountID)
}

func (q queries) DeleteProject(ctx context.Context, accountID, id int64) error {
	if _, err := q.q.ExecContext(ctx, `UPDATE servers SET project_id = NULL WHERE project_id = ? AND account_id = ?`, id, accountID); err != nil {
		return err
	}
	return q.execOne(ctx, `DELETE FROM projects WHERE id = ? AND account_id = ?`, id, accountID)
}

// ---- recipes ----

const recipeCols = `SELECT id, account_id, name, script, created_at FROM recipes WHERE account_id = ?`

// scanRecipe reads a recipe; scanRecipeName one whose script column is its size
// (RecipeNames).
func scanRecipe(sc func(...any) error) (hosting.Recipe, error) {
	var r hosting.Recipe
	var created int64
	if err := sc(&r.ID, &r.AccountID, &r.Name, &r.Script, &created); err != nil {
		return r, err
	}
	r.CreatedAt = fromMS(created)
	return r, nil
}

func scanRecipeName(sc func(...any) error) (hosting.Recipe, error) {
	var r hosting.Recipe
	var created int64
	if err := sc(&r.ID, &r.AccountID, &r.Name, &r.ScriptSize, &created); err != nil {
		return r, err
	}
	r.CreatedAt = fromMS(created)
	return r, nil
}

func (q queries) recipes(ctx context.Context, query string, args ...any) ([]hosting.Recipe, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	return orEmpty(collect(rows, err, scanRecipe))
}

func (q queries) Recipes(ctx context.Context, accountID int64) ([]hosting.Recipe, error) {
	return q.recipes(ctx, recipeCols+` ORDER BY id`, accountID)
}

func (q queries) RecipesAfter(ctx context.Context, accountID, after int64, limit int) ([]hosting.Recipe, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT id, account_id, name, script, created_at FROM recipes
		WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?`, accountID, after, limit)
	return orEmpty(collect(rows, err, scanRecipe))
}

func (q queries) RecipeNames(ctx context.Context, accountID int64) ([]hosting.Recipe, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT id, account_id, name, `+q.textBytes("script")+`, created_at FROM recipes
		WHERE account_id = ? ORDER BY id`, accountID)
	return orEmpty(collect(rows, err, scanRecipeName))
}

func (q queries) Recipe(ctx context.Context, accountID, id int64) (hosting.Recipe, error) {
	rs, err := q.recipes(ctx, recipeCols+` AND id = ?`, accountID, id)
	if err != nil || len(rs) == 0 {
		return hosting.Recipe{}, orNotFound(err)
	}
	return rs[0], nil
}

func (q queries) CreateRecipe(ctx context.Context, r hosting.Recipe) (int64, error) {
	return q.insert(ctx, `INSERT INTO recipes (account_id, name, script, created_at) VALUES (?, ?, ?, ?)`, r.AccountID, r.Name, r.Script, ms(r.CreatedAt))
}

func (q queries) UpdateRecipe(ctx context.Context, r hosting.Recipe) error {
	return q.execOne(ctx, `UPDATE recipes SET name = ?, script = ? WHERE id = ? AND account_id = ?`, r.Name, r.Script, r.ID, r.AccountID)
}

func (q queries) DeleteRecipe(ctx context.Context, accountID, id int64) error {
	return q.execOne(ctx, `DELETE FROM recipes WHERE id = ? AND account_id = ?`, id, accountID)
}
