package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// examples are the Example of each command that does something, by its path under
// berth: command lines as a user types them, with the names the README's walk-through
// gives (the SSH key laptop, the project web, the server web-1 by its display name,
// the volume data), and ids that exist when they are run in the order of
// TestExamplesRun, which runs them against a real Berth; TestExamples parses every
// line of them as berth would: the command exists and takes those flags and that
// many arguments.
var examples = map[string]string{
	"me":       "berth me\nberth me -o json",
	"app list": "berth app list -o wide",
	"attachment download": "berth attachment download 1 -o shot.png     # default: its own name, in the current directory\n" +
		"berth attachment download 2 -o - > boot-copy.log\n" +
		"berth attachment download 2 -o boot.log --force     # replaces boot.log",
	"billing show":         "berth billing show",
	"billing transactions": "berth billing transactions --limit 20",
	"context create": "berth context create prod --url https://berth.example.com/v1     # asks for the token\n" +
		`printf '%s\n' "$TOKEN" | berth context create ci --url https://berth.example.com/v1 --token-stdin`,
	"context delete": "berth context delete prod",
	"context list":   "berth context list",
	"context use":    "berth context use prod",
	"domain create": "berth domain create example.com\n" +
		"berth domain create example.org --ttl 600 --zone-file example.org.zone     # - reads the zone file from stdin",
	"domain delete":   "berth domain delete example.org",
	"domain describe": "berth domain describe example.com -o wide",
	"domain export":   "berth domain export example.com > example.com.zone",
	"domain import":   "berth domain import example.com example.com.zone\nberth domain import example.com - < example.com.zone",
	"domain list":     "berth domain list",
	"domain update":   "berth domain update example.com --ttl 600",
	"event list": "berth event list --type 'server.*' --limit 20\n" +
		"berth event list --resource server:1\n" +
		"berth event list --follow -o json     # one object a line, until Ctrl-C",
	"image list":         "berth image list --location fsn1",
	"license list":       "berth license list -o wide",
	"location list":      "berth location list -o wide",
	"operation describe": "berth operation describe 1",
	"operation list":     "berth operation list --server web-1\nberth operation list --status running",
	"operation wait":     "berth operation wait 1",
	"plan list": "berth plan list --location fsn1\n" +
		"berth plan list -o columns=name,location,price_monthly,in_stock",
	"project create":   "berth project create web",
	"project delete":   "berth project delete website",
	"project describe": "berth project describe web",
	"project list":     "berth project list",
	"project update":   "berth project update web --name website",
	"recipe create": "berth recipe create --name motd --script 'echo hello > /etc/motd'\n" +
		"berth recipe create --name setup --script-from-file setup.sh",
	"recipe delete":         "berth recipe delete motd",
	"recipe describe":       "berth recipe describe motd -o yaml",
	"recipe list":           "berth recipe list",
	"recipe update":         "berth recipe update motd --script-from-file motd.sh",
	"server license add":    "berth server license add web-1 plesk-web-admin     # by name or id (berth license list)",
	"server license list":   "berth server license list web-1\nberth server license list web-1 -o json",
	"server license remove": "berth server license remove web-1 plesk-web-admin     # or by the id server license list shows",
	"server rdns list":      "berth server rdns list web-1",
	"server rdns reset":     "berth server rdns reset web-1 100.64.0.1     # back to <server name>.<the operator's default domain>",
	"server rdns set":       "berth server rdns set web-1 100.64.0.1 www.example.com",
	"rrset delete":          "berth rrset delete example.com old A",
	"rrset list":            "berth rrset list example.com\nberth rrset list example.com --name www --type A -o json",
	"rrset set": "berth rrset set example.com www A 192.0.2.10 192.0.2.11 --ttl 300\n" +
		"berth rrset set example.com @ MX '10 mail' '20 mx.example.net.' --comment primary --comment backup\n" +
		"berth rrset set example.com _dmarc TXT '\"v=DMARC1; p=none\"'     # quoted: after a bare ; the rest is a comment\n" +
		"berth rrset set example.com old A 192.0.2.99",
	"server console": "berth server console web-1     # Ctrl-] detaches",
	"server create": "berth server create --plan s1-1c-1g --location fsn1 --image ubuntu-24.04 --ssh-key laptop --display-name web-1\n" +
		"berth server create --plan s2-2c-4g --location fsn1 --app docker --project web --license plesk-web-admin --no-wait\n" +
		"berth server create --plan s1-1c-1g --location hel1 --image debian-12 --root-password-stdin < root-password.txt",
	"server delete":   "berth server delete web-2\nberth server delete 2 3     # several at once",
	"server describe": "berth server describe web-1     # by display name, machine name or id\nberth server describe 1 -o json",
	"server list": "berth server list --project web\n" +
		"berth server list --status running -q     # ids only",
	"server metrics":         "berth server metrics web-1 --range 24h",
	"server poweroff":        "berth server poweroff web-1",
	"server poweron":         "berth server poweron web-1",
	"server reboot":          "berth server reboot web-1",
	"server reinstall":       "berth server reinstall web-1 --image debian-12",
	"server rescale":         "berth server shutdown web-1\nberth server rescale web-1 --plan s2-2c-4g --upgrade-disk\nberth server poweron web-1",
	"server rescale-options": "berth server rescale-options web-1",
	"server reset":           "berth server reset web-1",
	"server shutdown":        "berth server shutdown web-1",
	"server ssh":             "berth server ssh web-1\nberth server ssh web-1 -- -i ~/.ssh/id_ed25519 uptime",
	"server update":          "berth server update web-1 --display-name web-2\nberth server update web-2 --no-project",
	"snapshot create":        "berth snapshot create web-1 --name before-upgrade",
	"snapshot delete":        "berth snapshot delete web-1 before-upgrade",
	"snapshot describe":      "berth snapshot describe web-1 before-upgrade",
	"snapshot list":          "berth snapshot list web-1",
	"snapshot restore":       "berth snapshot restore web-1 before-upgrade",
	"ssh-key create":         "berth ssh-key create --name laptop --public-key-from-file ~/.ssh/id_ed25519.pub",
	"ssh-key delete":         "berth ssh-key delete laptop",
	"ssh-key describe":       "berth ssh-key describe laptop",
	"ssh-key list":           "berth ssh-key list",
	"ticket close":           "berth ticket close 1",
	"ticket create": "berth ticket create --subject 'Disk slow' --body 'Since noon.' --priority high --server web-1 --attach screenshot.png\n" +
		"berth ticket create --subject Invoice --body-file message.txt",
	"ticket describe": "berth ticket describe 1     # the messages, oldest first, and their files",
	"ticket list":     "berth ticket list\nberth ticket list --status answered -o json",
	"ticket reply": "berth ticket reply 1 --body 'Still slow.' --attach boot.log\n" +
		"berth ticket reply 1 --body-file - < message.txt",
	"volume attach": "berth volume attach data --server web-1 --automount     # the guest mounts it at /mnt/volume-<id>",
	"volume create": "berth volume create --name data --size 10 --location fsn1 --format ext4\n" +
		"berth volume create --name logs --size 20 --server web-1 --format xfs --automount",
	"volume delete":   "berth volume delete data",
	"volume describe": "berth volume describe data",
	"volume detach":   "berth volume detach data",
	"volume list":     "berth volume list --server web-1",
	"volume resize":   "berth volume resize data --size 20",
	"volume update":   "berth volume update data --project web\nberth volume update data --no-project",
	"webhook create": "berth webhook create --url https://hooks.example.com/berth     # every event\n" +
		"berth webhook create --url https://hooks.example.com/berth --event-type 'server.*' --event-type volume.created",
	"webhook delete":        "berth webhook delete 1",
	"webhook deliveries":    "berth webhook deliveries 1 --limit 5",
	"webhook describe":      "berth webhook describe 1",
	"webhook list":          "berth webhook list",
	"webhook redeliver":     "berth webhook redeliver 1 1     # webhook 1's delivery 1, once it has ended (webhook deliveries 1)",
	"webhook rotate-secret": "berth webhook rotate-secret 1",
	"webhook test":          "berth webhook test 1",
	"webhook update":        "berth webhook update 1 --enable\nberth webhook update 1 --event-type 'server.*'",
}

// addExamples sets the Example of cmd and of every command under it from examples,
// each line indented as cobra's help shows it.
func addExamples(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		addExamples(c)
	}
	path := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	if ex, ok := examples[path]; ok {
		cmd.Example = "  " + strings.ReplaceAll(ex, "\n", "\n  ")
	}
}
