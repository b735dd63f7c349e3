package ops

import (
	"context"
	"errors"
	"strings"

	"github.com/berthhq/berth/internal/hosting"
	"github.com/berthhq/berth/internal/store"
)

// notFoundOr maps store.ErrNotFound to the API's not-found answer.
func notFoundOr(what string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return hosting.ErrNotFound()
	}
	return internal(what, err)
}

// ---- SSH keys ----

// SSHKeys lists the account's keys.
func (s *Service) SSHKeys(ctx context.Context, p hosting.Principal) ([]hosting.SSHKey, error) {
	ks, err := s.store.SSHKeys(ctx, p.Account.ID)
	return ks, internal("ssh keys", err)
}

// CreateSSHKey stores a public key. Validation: name 1–64; public_key an OpenSSH key
// of a supported type, not already stored in the account.
func (s *Service) CreateSSHKey(ctx context.Context, p hosting.Principal, name, publicKey *string) (hosting.SSHKey, error) {
	var v hosting.Validation
	k := hosting.SSHKey{AccountID: p.Account.ID, CreatedAt: s.NowFor(p.Account.ID)}
	if name == nil {
		v.Add("name", "validation.required")
	} else {
		hosting.CheckLabel(&v, "name", *name)
		k.Name = strings.TrimSpace(*name)
	}
	if publicKey == nil {
		v.Add("public_key", "validation.required")
	} else {
		norm, fp, msg := hosting.ParsePublicKey(*publicKey)
		if msg != "" {
			v.Add("public_key", msg)
		}
		k.PublicKey, k.Fingerprint = norm, fp
	}
	if err := v.Err("name", "public_key"); err != nil {
		return k, err
	}
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if err := s.quotaLeft(ctx, tx, k.AccountID, hosting.QuotaSSHKeys); err != nil {
			return err
		}
		id, err := tx.CreateSSHKey(ctx, k)
		if errors.Is(err, store.ErrConflict) {
			return hosting.Invalid("public_key", "validation.ssh_key_duplicate")
		}
		if err != nil {
			return internal("create ssh key", err)
		}
		k.ID = id
		return s.emitSSHKey(ctx, tx, hosting.EventSSHKeyCreated, k)
	})
	return k, err
}

// DeleteSSHKey removes a stored key; servers built with it keep it.
func (s *Service) DeleteSSHKey(ctx context.Context, p hosting.Principal, id int64) error {
	return s.store.InTx(ctx, func(tx store.Tx) error {
		k, err := tx.SSHKey(ctx, p.Account.ID, id)
		if err == nil {
			err = tx.DeleteSSHKey(ctx, p.Account.ID, id)
		}
		if err != nil {
			return notFoundOr("delete ssh key", err)
		}
		return s.emitSSHKey(ctx, tx, hosting.EventSSHKeyDeleted, k)
	})
}

// ---- projects ----

// Projects lists the account's projects with their server counts.
func (s *Service) Projects(ctx context.Context, p hosting.Principal) ([]hosting.Project, error) {
	ps, err := s.store.Projects(ctx, p.Account.ID)
	return ps, internal("projects", err)
}

// Project finds one of the principal's projects: CodeNotFound when it has none of id.
func (s *Service) Project(ctx context.Context, p hosting.Principal, id int64) (hosting.Project, error) {
	pr, err := s.store.Project(ctx, p.Account.ID, id)
	return pr, notFoundOr("project", err)
}

func checkName(name *string) (string, error) {
	var v hosting.Validation
	if name == nil {
		v.Add("name", "validation.required")
		return "", v.Err()
	}
	hosting.CheckLabel(&v, "name", *name)
	return strings.TrimSpace(*name), v.Err()
}

// CreateProject creates a project; names are unique in an account.
func (s *Service) CreateProject(ctx context.Context, p hosting.Principal, name *string) (hosting.Project, error) {
	n, err := checkName(name)
	if err != nil {
		return hosting.Project{}, err
	}
	pr := hosting.Project{AccountID: p.Account.ID, Name: n, CreatedAt: s.NowFor(p.Account.ID)}
	err = s.store.InTx(ctx, func(tx store.Tx) error {
		if err := s.quotaLeft(ctx, tx, pr.AccountID, hosting.QuotaProjects); err != nil {
			return err
		}
		id, err := tx.CreateProject(ctx, pr)
		if errors.Is(err, store.ErrConflict) {
			return hosting.Invalid("name", "validation.name_taken")
		}
		if err != nil {
			return internal("create project", err)
		}
		pr.ID = id
		return s.emitNamed(ctx, tx, hosting.EventProjectCreated, "project", pr.AccountID, id, pr.Name)
	})
	return pr, err
}

// RenameProject renames a project.
func (s *Service) RenameProject(ctx context.Context, p hosting.Principal, id int64, name *string) (hosting.Project, error) {
	var pr hosting.Project
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.Project(ctx, p.Account.ID, id); err != nil {
			return notFoundOr("project", err)
		}
		n, err := checkName(name)
		if err != nil {
			return err
		}
		if err := tx.RenameProject(ctx, p.Account.ID, id, n); errors.Is(err, store.ErrConflict) {
			return hosting.Invalid("name", "validation.name_taken")
		} else if err != nil {
			return internal("rename project", err)
		}
		if pr, err = tx.Project(ctx, p.Account.ID, id); err != nil {
			return internal("project", err)
		}
		return s.emitNamed(ctx, tx, hosting.EventProjectUpdated, "project", pr.AccountID, id, pr.Name)
	})
	return pr, err
}

// DeleteProject deletes a project; its servers keep running, unassigned.
func (s *Service) DeleteProject(ctx context.Context, p hosting.Principal, id int64) error {
	return s.store.InTx(ctx, func(tx store.Tx) error {
		pr, err := tx.Project(ctx, p.Account.ID, id)
		if err == nil {
			err = tx.DeleteProject(ctx, p.Account.ID, id)
		}
		if err != nil {
			return notFoundOr("delete project", err)
		}
		return s.emitNamed(ctx, tx, hosting.EventProjectDeleted, "project", pr.AccountID, id, pr.Name)
	})
}

// ---- recipes ----

// RecipesAfter lists at most limit of the account's recipes with ids above after, by
// id: a page of the list, which is too heavy to hold whole (up to the recipe quota
// times 64 KiB of scripts).
func (s *Service) RecipesAfter(ctx context.Context, p hosting.Principal, after int64, limit int) ([]hosting.Recipe, error) {
	rs, err := s.store.RecipesAfter(ctx, p.Account.ID, after, limit)
	return rs, internal("recipes", err)
}

// RecipeNames lists the account's recipes without their scripts.
func (s *Service) RecipeNames(ctx context.Context, p hosting.Principal) ([]hosting.Recipe, error) {
	rs, err := s.store.RecipeNames(ctx, p.Account.ID)
	return rs, internal("recipes", err)
}

// Recipe returns one recipe.
func (s *Service) Recipe(ctx context.Context, p hosting.Principal, id int64) (hosting.Recipe, error) {
	r, err := s.store.Recipe(ctx, p.Account.ID, id)
	return r, notFoundOr("recipe", err)
}

func checkRecipe(v *hosting.Validation, r *hosting.Recipe, name, script *string, create bool) {
	if name != nil {
		hosting.CheckLabel(v, "name", *name)
		r.Name = strings.TrimSpace(*name)
	} else if create {
		v.Add("name", "validation.required")
	}
	if script != nil {
		switch {
		case strings.TrimSpace(*script) == "":
			v.Add("script", "validation.required")
		case len(*script) > hosting.RecipeScriptMax:
			v.Add("script", "validation.max_bytes", "max", hosting.RecipeScriptMax)
		default:
			hosting.CheckText(v, "script", *script)
		}
		r.Script = *script
	} else if create {
		v.Add("script", "validation.required")
	}
}

// CreateRecipe stores a first-boot script (at most 64 KiB).
func (s *Service) CreateRecipe(ctx context.Context, p hosting.Principal, name, script *string) (hosting.Recipe, error) {
	var v hosting.Validation
	r := hosting.Recipe{AccountID: p.Account.ID, CreatedAt: s.NowFor(p.Account.ID)}
	checkRecipe(&v, &r, name, script, true)
	if err := v.Err("name", "script"); err != nil {
		return r, err
	}
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		if err := s.quotaLeft(ctx, tx, r.AccountID, hosting.QuotaRecipes); err != nil {
			return err
		}
		id, err := tx.CreateRecipe(ctx, r)
		if err != nil {
			return internal("create recipe", err)
		}
		r.ID = id
		return s.emitNamed(ctx, tx, hosting.EventRecipeCreated, "recipe", r.AccountID, id, r.Name)
	})
	return r, err
}

// UpdateRecipe changes a recipe's name or script; servers already built keep theirs.
func (s *Service) UpdateRecipe(ctx context.Context, p hosting.Principal, id int64, name, script *string) (hosting.Recipe, error) {
	var r hosting.Recipe
	err := s.store.InTx(ctx, func(tx store.Tx) error {
		var err error
		if r, err = tx.Recipe(ctx, p.Account.ID, id); err != nil {
			return notFoundOr("recipe", err)
		}
		var v hosting.Validation
		checkRecipe(&v, &r, name, script, false)
		if err := v.Err("name", "script"); err != nil {
			return err
		}
		if err := tx.UpdateRecipe(ctx, r); err != nil {
			return internal("update recipe", err)
		}
		return s.emitNamed(ctx, tx, hosting.EventRecipeUpdated, "recipe", r.AccountID, r.ID, r.Name)
	})
	return r, err
}

// DeleteRecipe deletes a recipe.
func (s *Service) DeleteRecipe(ctx context.Context, p hosting.Principal, id int64) error {
	return s.store.InTx(ctx, func(tx store.Tx) error {
		r, err := tx.Recipe(ctx, p.Account.ID, id)
		if err == nil {
			err = tx.DeleteRecipe(ctx, p.Account.ID, id)
		}
		if err != nil {
			return notFoundOr("delete recipe", err)
		}
		return s.emitNamed(ctx, tx, hosting.EventRecipeDeleted, "recipe", r.AccountID, id, r.Name)
	})
}
