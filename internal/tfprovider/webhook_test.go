package tfprovider_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/berthhq/berth/internal/hosting"
)

// webhookAPI is a webhook's attributes as the API has them (nil: none of that id).
func webhookAPI(a *acc, id int64) (map[string]string, error) {
	w, err := a.c.GetWebhook(a.ctx(), id)
	if isNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	m := map[string]string{"url": w.URL, "enabled": fmt.Sprint(w.Enabled), "created_at": rfc3339(w.CreatedAt),
		"event_types.#": fmt.Sprint(len(w.EventTypes)), "disabled_reason": ""}
	if w.DisabledReason != nil {
		m["disabled_reason"] = *w.DisabledReason
	}
	return m, nil
}

// secretIsBerths checks that the state's secret is the one Berth signs with (which
// no API answer shows again).
func secretIsBerths(a *acc, name string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		id, err := idOf(s, name)
		if err != nil {
			return err
		}
		got, err := attr(s, name, "secret")
		if err != nil {
			return err
		}
		w, err := a.env.App.Service.Webhook(context.Background(), hosting.Principal{Account: hosting.Account{ID: a.acct.ID}}, id)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(got, "whsec_") || got != w.Secret {
			return fmt.Errorf("%s: secret %q in the state is not Berth's", name, got)
		}
		return nil
	}
}

// TestAccWebhook: a webhook is created with its secret in the state (sensitive in
// every plan), planned without a diff after the apply, imported by id (its secret
// then null), changed in place keeping its secret, created again after its deletion
// through the API; a refused url is an error on url in the account's language.
func TestAccWebhook(t *testing.T) {
	a := newAcc(t, "fr")
	const name = "berth_webhook.x"
	first := `resource "berth_webhook" "x" { url = "https://hooks.example.com/berth" }`
	second := hcl(`resource "berth_webhook" "x" { url = "https://hooks.example.com/v2"; event_types = ["server.*", "webhook.*"]; enabled = false }`)
	agrees := apiAgrees(name, func(id int64) (map[string]string, error) { return webhookAPI(a, id) })
	var firstID int64
	var secret string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy: gone("berth_webhook", func(id int64) (bool, error) {
			m, err := webhookAPI(a, id)
			return m != nil, err
		}),
		Steps: append([]resource.TestStep{
			{
				Config: a.config(first),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply:             []plancheck.PlanCheck{plancheck.ExpectSensitiveValue(name, tfjsonpath.New("secret"))},
					PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(agrees, secretIsBerths(a, name),
					resource.TestCheckResourceAttr(name, "enabled", "true"),
					resource.TestCheckTypeSetElemAttr(name, "event_types.*", "*"),
					func(s *terraform.State) (err error) {
						firstID, err = idOf(s, name)
						if err == nil {
							secret, err = attr(s, name, "secret")
						}
						return err
					}),
			},
			{
				ResourceName: name, ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"secret"},
				ImportStateCheck: func(is []*terraform.InstanceState) error {
					if len(is) != 1 || is[0].Attributes["secret"] != "" {
						return fmt.Errorf("imported: %v, want one webhook without a secret", is)
					}
					return nil
				},
			},
		}, webhookChangeSteps(t, a, second, agrees, &firstID, &secret)...),
	})
}

// webhookChangeSteps are TestAccWebhook's steps after the import: an in-place change
// that keeps the secret, a deletion through the API (planned to be created again),
// and a url Berth refuses.
func webhookChangeSteps(t *testing.T, a *acc, second string, agrees resource.TestCheckFunc, firstID *int64, secret *string) []resource.TestStep {
	const name = "berth_webhook.x"
	return []resource.TestStep{
		{
			Config: a.config(second),
			ConfigPlanChecks: resource.ConfigPlanChecks{
				PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(name, plancheck.ResourceActionUpdate),
					plancheck.ExpectSensitiveValue(name, tfjsonpath.New("secret")),
					plancheck.ExpectKnownValue(name, tfjsonpath.New("secret"), knownString{secret})},
				PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
			},
			Check: resource.ComposeAggregateTestCheckFunc(agrees, secretIsBerths(a, name),
				resource.TestCheckResourceAttr(name, "enabled", "false"),
				resource.TestCheckTypeSetElemAttr(name, "event_types.*", "server.*"),
				resource.TestCheckTypeSetElemAttr(name, "event_types.*", "webhook.*"),
				func(s *terraform.State) error {
					if id, err := idOf(s, name); err != nil || id != *firstID {
						return fmt.Errorf("id %d after an in-place change, %d before (%v)", id, *firstID, err)
					}
					return nil
				}),
		},
		{
			PreConfig: func() {
				if err := a.c.DeleteWebhook(a.ctx(), *firstID); err != nil {
					t.Fatalf("deleting webhook %d through the API: %v", *firstID, err)
				}
			},
			Config:           a.config(second),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(name, plancheck.ResourceActionCreate)}},
			Check: resource.ComposeAggregateTestCheckFunc(agrees, secretIsBerths(a, name), func(s *terraform.State) error {
				if id, err := idOf(s, name); err != nil || id == *firstID {
					return fmt.Errorf("id %d after its deletion through the API (before: %d), %v", id, *firstID, err)
				}
				return nil
			}),
		},
		{
			Config: a.config(second + hcl(`resource "berth_webhook" "y" { url = "https://10.0.0.1/hook" }`)),
			ExpectError: onAttribute("berth_webhook.y", "url", message(t, "fr", "validation.webhook_url_address",
				map[string]any{"address": "10.0.0.1", "reason": "private"})),
		},
	}
}

// knownString is a knownvalue.Check of a string known only once an earlier step ran.
type knownString struct{ want *string }

var _ knownvalue.Check = knownString{}

func (k knownString) CheckValue(v any) error {
	if s, ok := v.(string); !ok || s != *k.want || s == "" {
		return fmt.Errorf("value %v, want %q", v, *k.want)
	}
	return nil
}

func (k knownString) String() string { return *k.want }
