package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/berthhq/berth/internal/ops"
	"github.com/berthhq/berth/internal/testenv"
)

// TestContractOrderErrorsTogether pins an order's 422 when many of its rules fail at
// once, byte for byte, in each language: every field's messages, each field's in the
// order its rules run; the message, which is the error of the first field in the
// request schema's order (the quota's after them) and "(and N more errors)"; and the
// code. TestContractOrderValidation checks each rule alone.
func TestContractOrderErrorsTogether(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	a, de, fr := env.NewAccount("en", "100", ""), env.NewAccount("de", "100", ""), env.NewAccount("fr", "100", "")
	key := num(t, createKey(t, a)["id"])
	poor, err := env.App.Service.CreateAccount(ctx, ops.NewAccount{Email: "poor@example.com", Password: "correct horse battery",
		Language: "fr", Credit: money(t, "0.0050"), Quotas: map[string]int{"servers": 0}})
	if err != nil {
		t.Fatal(err)
	}
	_, poorToken := newToken(t, env, poor.ID, "servers", 0)
	for _, tc := range []struct {
		name   string
		caller caller
		body   map[string]any
		want   string
	}{
		{"every field wrong", a, map[string]any{"plan_id": 999, "location_id": 999, "image_id": 999, "app_id": 999,
			"ssh_key_ids": []int64{999999, key, 999999, key}, "display_name": "", "project_id": 999999, "recipe_id": 999999,
			"root_password": "short"},
			`{"message":"No such plan. (and 9 more errors)","code":"validation_failed","errors":{"display_name":["This field is required."],` +
				`"image_id":["Send either image_id or app_id, not both."],"location_id":["No such location."],"plan_id":["No such plan."],` +
				`"project_id":["No such project."],"recipe_id":["No such recipe."],"root_password":["Must be between 8 and 72 characters."],` +
				`"ssh_key_ids":["SSH key 999999 does not exist.","SSH key 999999 is listed twice.","SSH key KEY is listed twice."]}}`},
		{"what the location does not offer", de, map[string]any{"plan_id": 5, "location_id": 3, "image_id": 3,
			"display_name": "a\nb"},
			`{"message":"Dieser Tarif wird an diesem Standort nicht angeboten. (und 2 weitere Fehler)","code":"validation_failed",` +
				`"errors":{"display_name":["Darf keine Steuerzeichen enthalten."],"image_id":["Dieses Image wird an diesem Standort nicht angeboten."],` +
				`"plan_id":["Dieser Tarif wird an diesem Standort nicht angeboten."]}}`},
		{"an app but no plan", fr, map[string]any{"location_id": 1, "app_id": 999, "root_password": strings.Repeat("p", 73)},
			`{"message":"Ce champ est obligatoire. (et 2 autres erreurs)","code":"validation_failed","errors":{"app_id":["Application inconnue."],` +
				`"plan_id":["Ce champ est obligatoire."],"root_password":["Doit comporter entre 8 et 72 caractères."]}}`},
		{"credit and quota", tokenCaller{env, poorToken}, map[string]any{"plan_id": 1, "location_id": 1, "image_id": 1},
			`{"message":"Le crédit est insuffisant : commander cette offre nécessite au moins 0.0070 EUR pour une heure. (et 1 autre erreur)",` +
				`"code":"insufficient_credit","errors":{"plan_id":["Le crédit est insuffisant : commander cette offre nécessite au moins 0.0070 EUR pour une heure."],` +
				`"server_quota":["Le quota de serveurs du compte (0) est atteint."]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.caller.Do("POST", "/servers", tc.body).Want(t, 422)
			want := strings.ReplaceAll(tc.want, "KEY", fmt.Sprint(key))
			if got := strings.TrimSpace(string(r.Body)); got != want {
				t.Errorf("body\n%s\nwant\n%s", got, want)
			}
		})
	}
}
