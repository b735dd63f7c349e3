package webui_test

import (
	"net/http"
	"testing"

	"github.com/berthhq/berth/internal/testenv"
)

// TestLanguageSetThroughTheAPI: PATCH /v1/me with a read-only token changes the
// language of a console session that is already signed in, from its next page on.
func TestLanguageSetThroughTheAPI(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	v, a := signedIn(t, env, "en")
	wantText(t, v.get("/settings"), `<html lang="en">`)
	token, _ := apiToken(t, env, a.ID)
	env.Do(token, "PATCH", "/me", map[string]any{"language": "de"}, nil).Want(t, http.StatusOK)
	wantText(t, v.get("/settings"), `<html lang="de">`, "Einstellungen")
	env.Do(token, "PATCH", "/me", map[string]any{"language": "fr"}, nil).Want(t, http.StatusOK)
	wantText(t, v.get("/servers"), `<html lang="fr">`)
}
