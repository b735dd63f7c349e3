package tfprovider_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
	"github.com/berthhq/berth/internal/testenv"
	"github.com/berthhq/berth/internal/tfprovider"
)

// TestAccREADME applies the README's Terraform configuration as written (its hcl
// block) against a real Berth, the provider found by its address berth/berth: two
// running servers with the output of their addresses, a volume attached to one of
// them, a zone whose www and MX its nameserver answers (asked with dig, as the
// README's walk-through does) and the first server's PTR, an empty plan after the
// apply (terraform-plugin-testing plans again after every apply), and nothing left
// in the account after destroy.
func TestAccREADME(t *testing.T) {
	newAccSkip(t)
	testenv.Dig(t)
	a := newAcc(t, "en", testenv.Options{RateLimit: 1 << 20, ServeDNS: true})
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(raw)
	start := strings.Index(section, "## Terraform and OpenTofu")
	if start < 0 {
		t.Fatal(`README has no section "Terraform and OpenTofu"`)
	}
	section = section[start:]
	i := strings.Index(section, "```hcl\n")
	if i < 0 {
		t.Fatal("the section has no hcl block")
	}
	config := section[i+len("```hcl\n"):]
	config = config[:strings.Index(config, "```")]

	// As the README has it: url and token from the environment, the key from
	// ~/.ssh/id_ed25519.pub, the provider from its address berth/berth.
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519.pub"), []byte(testenv.PublicKey(t)+" readme@example"+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv(tfprovider.EnvURL, a.env.URL)
	t.Setenv(tfprovider.EnvToken, a.acct.Token)
	t.Setenv(resource.EnvTfAccProviderNamespace, "berth")

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: a.providers(),
		CheckDestroy:             func(*terraform.State) error { return readmeLeftovers(a) },
		Steps: []resource.TestStep{{
			Config: config,
			Check:  func(s *terraform.State) error { return readmeApplied(a, s) },
		}},
	})
}

// readmeApplied checks the README's servers, its output and its volume in the API.
func readmeApplied(a *acc, s *terraform.State) error {
	servers, err := a.c.ListServers(a.ctx(), client.ServerListOptions{})
	if err != nil {
		return err
	}
	out, ok := s.RootModule().Outputs["addresses"]
	if !ok {
		return fmt.Errorf("no output addresses")
	}
	addrs, ok := out.Value.(map[string]any)
	if len(servers) != 2 || !ok || len(addrs) != 2 {
		return fmt.Errorf("%d servers, output addresses %v", len(servers), out.Value)
	}
	for _, srv := range servers {
		if srv.Status != "running" || srv.IPv4 == nil || addrs[srv.Name] != *srv.IPv4 {
			return fmt.Errorf("server %s is %s at %v; the output says %v", srv.Name, srv.Status, deref(srv.IPv4), addrs[srv.Name])
		}
	}
	if err := readmeVolume(a, servers); err != nil {
		return err
	}
	return readmeDNS(a, s, servers)
}

// readmeDNS checks what the README's zone and PTR answer over DNS: www at the first
// server's IPv4 address (the output www), the MX as Berth writes it, and the PTR of
// that address.
func readmeDNS(a *acc, s *terraform.State, servers []api.Server) error {
	www, ok := s.RootModule().Outputs["www"]
	if !ok {
		return fmt.Errorf("no output www")
	}
	var first *api.Server
	for i := range servers {
		if servers[i].DisplayName == "web-1" {
			first = &servers[i]
		}
	}
	if first == nil || first.IPv4 == nil || www.Value != *first.IPv4 {
		return fmt.Errorf("output www %v, want web-1's IPv4 address of %+v", www.Value, servers)
	}
	for _, q := range []struct{ args, want string }{
		{"www.example.com A", *first.IPv4},
		{"example.com MX", "10 www.example.com."},
		{"-x " + *first.IPv4, "www.example.com."},
	} {
		got, err := a.env.Dig(strings.Fields(q.args)...)
		if err != nil {
			return err
		}
		if got != q.want {
			return fmt.Errorf("dig %s: %q, want %q", q.args, got, q.want)
		}
	}
	return nil
}

// readmeLeftovers fails when the account holds anything after the destroy.
func readmeLeftovers(a *acc) error {
	ctx := a.ctx()
	servers, err := a.c.ListServers(ctx, client.ServerListOptions{})
	if err != nil {
		return err
	}
	keys, err := a.c.ListSSHKeys(ctx)
	if err != nil {
		return err
	}
	projects, err := a.c.ListProjects(ctx)
	if err != nil {
		return err
	}
	volumes, err := a.c.ListVolumes(ctx, client.VolumeListOptions{})
	if err != nil {
		return err
	}
	domains, err := a.c.ListDomains(ctx)
	if err != nil {
		return err
	}
	if len(servers)+len(keys)+len(projects)+len(volumes)+len(domains) > 0 {
		return fmt.Errorf("after destroy: %d servers, %d keys, %d projects, %d volumes, %d zones",
			len(servers), len(keys), len(projects), len(volumes), len(domains))
	}
	return nil
}

// readmeVolume checks the README's volume in the API: 10 GB of ext4, attached to one
// of servers.
func readmeVolume(a *acc, servers []api.Server) error {
	vols, err := a.c.ListVolumes(a.ctx(), client.VolumeListOptions{})
	if err != nil {
		return err
	}
	if len(vols) != 1 || vols[0].Name != "data" || vols[0].SizeGB != 10 || deref(vols[0].Format) != "ext4" || vols[0].ServerID == nil {
		return fmt.Errorf("volumes %+v, want data, 10 GB of ext4, attached", vols)
	}
	for _, srv := range servers {
		if srv.ID == *vols[0].ServerID {
			return nil
		}
	}
	return fmt.Errorf("volume data is attached to server %d, none of the configuration's", *vols[0].ServerID)
}
