package main

import (
	"context"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

var sshKeys = &resource[api.SSHKey]{
	name: "ssh-key", short: "Manage SSH keys", noun: "SSH key", arg: "KEY",
	view: view[api.SSHKey]{
		id: func(k api.SSHKey) string { return i64(k.ID) },
		columns: []column[api.SSHKey]{
			{name: "id", value: func(k api.SSHKey) string { return i64(k.ID) }},
			{name: "name", value: func(k api.SSHKey) string { return k.Name }},
			{name: "fingerprint", value: func(k api.SSHKey) string { return k.Fingerprint }},
			{name: "public_key", wide: true, value: func(k api.SSHKey) string { return k.PublicKey }},
			{name: "created_at", wide: true, value: func(k api.SSHKey) string { return ts(k.CreatedAt) }},
		},
	},
	all:          func(ctx context.Context, c *client.Client, _ string) ([]api.SSHKey, error) { return c.ListSSHKeys(ctx) },
	id:           func(k api.SSHKey) int64 { return k.ID },
	names:        func(k api.SSHKey) []string { return []string{k.Name, k.Fingerprint} },
	listHelp:     "List the SSH keys",
	describeHelp: "Show an SSH key (by name, fingerprint or id)",
	deleteHelp:   "Delete an SSH key (servers keep it)",
	del: func(ctx context.Context, c *client.Client, _ string, r ref) (string, error) {
		return "", c.DeleteSSHKey(ctx, r.id)
	},
}

func sshKeyCmd(g *globals) *cobra.Command {
	var name, key, keyFile string
	create := &cobra.Command{
		Use: "create --name NAME (--public-key KEY | --public-key-from-file FILE)", Short: "Store a public key", Args: cobra.NoArgs,
		RunE: withClient(g, func(ctx context.Context, c *client.Client, _ []string) error {
			if keyFile != "" {
				b, err := os.ReadFile(keyFile)
				if err != nil {
					return err
				}
				key = strings.TrimSpace(string(b))
			}
			req := api.SSHKeyCreate{}
			if name != "" {
				req.Name = &name
			}
			if key != "" {
				req.PublicKey = &key
			}
			k, err := c.CreateSSHKey(ctx, req)
			if err != nil {
				return err
			}
			return sshKeys.printOne(ctx, g, c, *k)
		}),
	}
	create.Flags().StringVar(&name, "name", "", "key name")
	create.Flags().StringVar(&key, "public-key", "", "public key (authorized_keys line)")
	create.Flags().StringVar(&keyFile, "public-key-from-file", "", "file holding the public key (e.g. ~/.ssh/id_ed25519.pub)")
	create.MarkFlagsMutuallyExclusive("public-key", "public-key-from-file")
	return sshKeys.command(g, create)
}
